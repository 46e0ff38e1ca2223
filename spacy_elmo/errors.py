"""The package's exception base class: every error a user can cause is a `SpacyElmoError`."""


class SpacyElmoError(ValueError):
    """A spacy-elmo setting, file or input cannot be used; the message names what and why."""


class ConfigError(SpacyElmoError):
    """A setting of the `elmo` component or of an ELMo model block is invalid."""
