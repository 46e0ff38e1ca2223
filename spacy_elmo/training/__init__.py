"""Pretraining and fine-tuning of ELMo biLMs from raw text (pure PyTorch + spaCy's tokenizer)."""

from ..dependencies import require

require("torch", "spacy_elmo.training (pretraining the biLM)")

from .errors import CorpusError, TrainingSetupError  # noqa: E402
from .evaluation import Perplexity, evaluate_perplexity  # noqa: E402
from .presets import PRESETS, apply_overrides, preset_architecture  # noqa: E402
from .settings import TrainingSettings  # noqa: E402
from .run import pretrain, resume  # noqa: E402
from .trainer import PretrainResult  # noqa: E402

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
