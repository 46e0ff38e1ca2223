"""The spaCy glue: the `elmo` component, its settings, doc attributes and feature cache."""
