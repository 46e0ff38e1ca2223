"""The spaCy glue: the `elmo` component, its doc attributes and feature cache."""
