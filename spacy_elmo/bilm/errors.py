"""Errors raised when a biLM cannot be loaded or used."""
from ..errors import SpacyElmoError


class ModelFormatError(SpacyElmoError):
    """A model file or folder is missing, unreadable, or does not match its options."""


class BundledModelNotFound(ModelFormatError):
    """A bundled model name was asked for that this installation does not ship."""


class ModelDownloadError(SpacyElmoError):
    """A published model is not cached and cannot be downloaded (offline, or the network failed)."""
