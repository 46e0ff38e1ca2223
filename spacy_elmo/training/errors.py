"""Errors of the pretraining tools, reported to the user without a traceback."""


class TrainingSetupError(ValueError):
    """A pretraining run cannot start: bad options, missing files, inconsistent resume."""


class CorpusError(ValueError):
    """A text file cannot be used as training or evaluation data."""


class TrainingDiverged(RuntimeError):
    """The loss stopped being finite; the run ended without writing the broken weights."""
