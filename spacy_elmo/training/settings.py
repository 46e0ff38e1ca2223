"""Hyper-parameters and budgets of a pretraining run, with the bilm-tf recipe as defaults."""

from dataclasses import asdict, dataclass, fields
from typing import Any, Dict, Optional

from ..runtime import COMPUTE_DTYPES, STORAGE_DTYPES
from .corpus import DEFAULT_MAX_LINE_CHARS
from .errors import TrainingSetupError

OPTIMIZERS = ("adagrad", "adam", "sgd")
# Spellings of settings that 0.3.0 removed, for the error naming the new one (they are not read).
REMOVED = {
    "max_tokens": "token_budget",
    "n_negative_samples": "negatives",
    "n_epochs": "epochs",
    "max_seconds": "max_time",
    "precision": "compute_dtype",
    "model_dtype": "storage_dtype",
}
# Settings that may change when a run is resumed: budgets, intervals and storage, not the maths.
RESUMABLE = (
    "epochs",
    "max_steps",
    "token_budget",
    "max_time",
    "checkpoint_every",
    "eval_every",
    "log_every",
    "keep_checkpoints",
    "storage_dtype",
    "compile",
)


@dataclass
class TrainingSettings:
    """How to train (bilm-tf's `train_elmo.py` recipe): per-process batch of `batch_size` rows ×
    `unroll_steps` tokens, sampled softmax with `negatives` (full softmax when the vocabulary is not larger),
    Adagrad 0.2 with accumulator 1.0 on loss × unroll_steps, global-norm clip 10, dropout 0.1.
    `compute_dtype` "bfloat16" runs the large matrix products (char CNN, highway, LSTM input,
    recurrent and projection products, softmax) in bfloat16 under autocast; weights, optimizer
    state, cell state, gradient clipping and the loss stay float32.
    `storage_dtype` is the type the final model is saved in (checkpoints keep float32).
    `compile` runs the element-wise part of each LSTM step as fused loops made by `torch.compile`
    (the same maths, faster; it costs a compilation at the start).

    A run stops at the first budget reached: `epochs` over the data, `max_steps`, `token_budget`
    (all processes together), or `max_time` seconds of this invocation.
    The command line's options have these names (`--max-time` also takes e.g. "90m").
    """

    lang: str = "en"
    batch_size: int = 128
    unroll_steps: int = 20
    negatives: int = 8192
    optimizer: str = "adagrad"
    learning_rate: float = 0.2
    initial_accumulator: float = 1.0
    clip_norm: float = 10.0
    dropout: float = 0.1
    compute_dtype: str = "float32"
    max_vocab_size: Optional[int] = None
    min_count: int = 1
    max_line_chars: int = DEFAULT_MAX_LINE_CHARS
    seed: int = 0
    epochs: Optional[int] = 10
    max_steps: Optional[int] = None
    token_budget: Optional[int] = None
    max_time: Optional[float] = None
    checkpoint_every: int = 1250
    eval_every: int = 1000
    log_every: int = 100
    keep_checkpoints: int = 2
    storage_dtype: str = "float32"
    compile: bool = False

    def __post_init__(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise TrainingSetupError(
                f"unknown optimizer {self.optimizer!r}; choose one of {', '.join(OPTIMIZERS)}"
            )
        for name in (
            "batch_size",
            "unroll_steps",
            "checkpoint_every",
            "eval_every",
            "log_every",
            "keep_checkpoints",
            "min_count",
        ):
            if getattr(self, name) < 1:
                raise TrainingSetupError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.compute_dtype not in COMPUTE_DTYPES:
            raise TrainingSetupError(
                f"unknown compute dtype {self.compute_dtype!r}; choose one of {', '.join(COMPUTE_DTYPES)}"
            )
        self.compute_dtype = COMPUTE_DTYPES[self.compute_dtype]
        if self.compute_dtype == "int8":
            raise TrainingSetupError("compute dtype int8 is for inference only; train in float32 or bf16")
        if self.storage_dtype not in STORAGE_DTYPES:
            raise TrainingSetupError(
                f"unknown storage dtype {self.storage_dtype!r}; choose one of {', '.join(STORAGE_DTYPES)}"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise TrainingSetupError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.negatives < 1 or self.learning_rate <= 0 or self.clip_norm <= 0:
            raise TrainingSetupError("negatives, learning_rate and clip_norm must be positive")

    def tokens_per_step(self, world_size: int = 1) -> int:
        """Positions of the training stream one step reads as inputs, all processes together."""
        return self.batch_size * self.unroll_steps * world_size

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "TrainingSettings":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            names = ", ".join(f"{key} (now {REMOVED[key]})" if key in REMOVED else key for key in unknown)
            raise TrainingSetupError(f"unknown training settings: {names}")
        return cls(**data)
