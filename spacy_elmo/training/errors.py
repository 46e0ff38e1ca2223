"""Errors of the pretraining tools, reported to the user without a traceback."""
from ..errors import SpacyElmoError


class TrainingSetupError(SpacyElmoError):
    """A pretraining run cannot start: bad options, missing files, inconsistent resume."""


class CorpusError(SpacyElmoError):
    """A text file cannot be used as training or evaluation data."""


class TrainingDiverged(SpacyElmoError):
    """The loss stopped being finite; the run ended without writing the broken weights."""
