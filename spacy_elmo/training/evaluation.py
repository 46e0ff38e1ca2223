"""Perplexity of a biLM's forward and backward LMs with the full softmax (bilm-tf `run_test`)."""

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Optional, Sequence

import torch
from torch.nn import functional as F

from ..bilm import BiLM, ModelFormatError
from ..runtime import DEFAULT_BATCH_SIZE
from .batcher import RowBatcher, to_tensors
from .corpus import Cursor
from .errors import CorpusError
from .objective import LstmState, top_layer
from .settings import TrainingSettings
from .vocab import SoftmaxVocab

# Most logits computed at once (rows × vocabulary), to bound memory with large vocabularies.
MAX_LOGITS = 2**24


@dataclass
class Perplexity:
    """Forward, backward and mean perplexity; mean = exp of the average of the two losses."""

    forward: float
    backward: float
    mean: float
    n_tokens: int


def require_softmax(bilm: BiLM) -> None:
    """Raise a ModelFormatError unless the biLM has the softmax that perplexity needs."""
    if bilm.softmax is None or bilm.vocab is None:
        raise ModelFormatError(
            "this biLM has no softmax (original weights hold none); fine-tune it with "
            "`pretrain --init` before evaluating its perplexity"
        )


def scored_targets(sentences: Sequence[List[str]], batch_size: int) -> int:
    """How many targets per direction `evaluate_perplexity` scores: every position of the
    stream (each sentence's tokens and both markers) but the last of each row used."""
    non_empty = sum(1 for sentence in sentences if sentence)
    return sum(len(sentence) + 2 for sentence in sentences if sentence) - min(batch_size, non_empty)


def evaluate_perplexity(
    bilm: BiLM,
    sentences: Iterable[List[str]],
    batch_size: int = DEFAULT_BATCH_SIZE,
    unroll_steps: int = TrainingSettings.unroll_steps,
    progress: Optional[Callable[[int], Any]] = None,
) -> Perplexity:
    """Run the biLM over `sentences` as training streams them (rows, carried LSTM state) and
    score every target with the full softmax. Restores the model's training mode afterwards.

    progress (Optional[Callable[[int], Any]]): called with the number of targets scored (per
        direction) after each window, e.g. `tqdm.update`; `scored_targets` gives their total.
    RETURNS (Perplexity): with `n_tokens` the targets scored per direction.
    """
    require_softmax(bilm)
    vocab = SoftmaxVocab(bilm.vocab)
    stream = ((Cursor(), tokens) for tokens in sentences)
    batcher = RowBatcher(stream, batch_size, unroll_steps)
    was_training = bilm.training
    bilm.eval()
    totals = torch.zeros(2, dtype=torch.float64)
    n_tokens = 0
    state: Optional[LstmState] = None
    try:
        with torch.no_grad():
            while True:
                window = batcher.next_window(drain=True)
                if window is None:
                    break
                batch = to_tensors(window, bilm.characters.encode, vocab).to(bilm.device)
                top, state = top_layer(bilm, batch, state)
                for direction in range(2):
                    totals[direction] += _summed_loss(
                        bilm.softmax, top[direction][batch.mask], batch.targets[direction][batch.mask]
                    )
                n_tokens += batch.n_tokens
                if progress is not None:
                    progress(batch.n_tokens)
    finally:
        bilm.train(was_training)
    if n_tokens == 0:
        raise CorpusError("no tokens to evaluate")
    losses = (totals / n_tokens).tolist()
    return Perplexity(math.exp(losses[0]), math.exp(losses[1]), math.exp(sum(losses) / 2), n_tokens)


def _summed_loss(softmax: torch.nn.Linear, hidden: torch.Tensor, targets: torch.Tensor) -> float:
    """Full-softmax cross-entropy summed over the rows, computed in chunks of rows."""
    rows = max(1, MAX_LOGITS // softmax.out_features)
    total = 0.0
    for start in range(0, len(hidden), rows):
        logits = softmax(hidden[start : start + rows]).float()
        total += float(F.cross_entropy(logits, targets[start : start + rows], reduction="sum"))
    return total
