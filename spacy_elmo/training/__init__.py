"""Pretraining and fine-tuning of ELMo biLMs from raw text (pure PyTorch + spaCy's tokenizer)."""

from .errors import CorpusError, TrainingSetupError
from .evaluation import Perplexity, evaluate_perplexity
from .presets import PRESETS, apply_overrides, preset_architecture
from .settings import TrainingSettings
from .run import pretrain, resume
from .trainer import PretrainResult

__all__ = [
    "PRESETS",
    "CorpusError",
    "Perplexity",
    "PretrainResult",
    "TrainingSettings",
    "TrainingSetupError",
    "apply_overrides",
    "evaluate_perplexity",
    "preset_architecture",
    "pretrain",
    "resume",
]
