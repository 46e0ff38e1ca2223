"""Softmax losses over the vocabulary: sampled (training) and full (evaluation).

The sampled loss is TensorFlow's `sampled_softmax_loss` with its default log-uniform (Zipf)
sampler, as bilm-tf trains: one set of unique negatives per call shared by all positions,
logits corrected by −log(expected count), accidental hits of the true id removed.
"""

import math
from typing import Optional, Tuple

import torch
from torch.nn import functional as F

from ..bilm.precision import accumulation_dtype


class LogUniformSampler:
    """Sample unique ids with P(k) = (log(k+2) − log(k+1)) / log(V+1), favouring frequent
    (low) ids of a frequency-sorted vocabulary.

    vocab_size (int): V.
    n_samples (int): unique ids per draw; must be below V.
    """

    def __init__(self, vocab_size: int, n_samples: int) -> None:
        if not 0 < n_samples < vocab_size:
            raise ValueError(f"need 0 < n_samples < vocab_size, got {n_samples} and {vocab_size}")
        self.vocab_size = vocab_size
        self.n_samples = n_samples
        self._log_range = math.log(vocab_size + 1)

    def probability(self, ids: torch.Tensor) -> torch.Tensor:
        """P(k) of each id."""
        ids = ids.double()
        return (torch.log(ids + 2) - torch.log(ids + 1)) / self._log_range

    def expected_count(self, ids: torch.Tensor, n_tries: int) -> torch.Tensor:
        """Expected number of times an id appears in `n_tries` draws: 1 − (1 − P)^n_tries."""
        return -torch.expm1(n_tries * torch.log1p(-self.probability(ids)))

    def sample(self, generator: Optional[torch.Generator] = None) -> Tuple[torch.Tensor, int]:
        """Draw until `n_samples` distinct ids are found; returns them (in draw order) and the draws made."""
        found = torch.empty(0, dtype=torch.int64)
        n_tries = 0
        while True:
            draws = self._draw(2 * self.n_samples + 64, generator)
            sequence = torch.cat([found, draws])
            first = _first_occurrences(sequence)
            n_new = int(first.sum()) - len(found)
            if len(found) + n_new >= self.n_samples:
                order = torch.cumsum(first, 0)
                stop = int(torch.searchsorted(order, self.n_samples))  # index of the n-th distinct draw
                return sequence[: stop + 1][first[: stop + 1]], n_tries + stop + 1 - len(found)
            found = sequence[first]
            n_tries += len(draws)

    def _draw(self, n: int, generator: Optional[torch.Generator]) -> torch.Tensor:
        uniform = torch.rand(n, generator=generator, dtype=torch.float64)
        ids = torch.exp(uniform * self._log_range).long() - 1
        return ids.clamp_(0, self.vocab_size - 1)


def _first_occurrences(sequence: torch.Tensor) -> torch.Tensor:
    """Bool mask of the positions holding the first occurrence of their value."""
    _, inverse = torch.unique(sequence, return_inverse=True)
    positions = torch.arange(len(sequence))
    first = torch.full((int(inverse.max()) + 1,), len(sequence), dtype=torch.int64)
    first = first.scatter_reduce(0, inverse, positions, reduce="amin")
    return first[inverse] == positions


def sampled_softmax_loss(
    hidden: torch.Tensor,
    targets: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    sampler: LogUniformSampler,
    generator: Optional[torch.Generator] = None,
    compute_dtype: Optional[torch.dtype] = None,
) -> torch.Tensor:
    """Mean sampled-softmax cross-entropy of `hidden` (N, P) against `targets` (N,).

    weight (Tensor): (V, P) softmax weights; bias (Tensor): (V,).
    compute_dtype (Optional[torch.dtype]): type of the products with the negatives (e.g.
        torch.bfloat16); exponentials, sums and the loss stay float32.
    """
    sampled, n_tries = sampler.sample(generator)
    sampled = sampled.to(hidden.device)
    log_q_true = torch.log(sampler.expected_count(targets.cpu(), n_tries)).to(hidden.device, hidden.dtype)
    log_q_sampled = torch.log(sampler.expected_count(sampled.cpu(), n_tries)).to(hidden.device, hidden.dtype)
    true_logits = (hidden * weight[targets]).sum(-1) + bias[targets] - log_q_true
    # Accidental hits (a target among the negatives) are removed: at most one per row.
    slot = torch.full((weight.shape[0],), -1, dtype=torch.int64, device=hidden.device)
    slot[sampled] = torch.arange(len(sampled), device=hidden.device)
    dtype = compute_dtype or hidden.dtype
    negatives = _NegativesLogSumExp.apply(
        hidden.to(dtype), weight[sampled].to(dtype), (bias[sampled] - log_q_sampled).to(accumulation_dtype(dtype)), slot[targets]
    )
    true_logits = true_logits.to(negatives.dtype)
    return (torch.logaddexp(true_logits, negatives) - true_logits).mean()


# Rows of logits computed at once: (rows × negatives) float32 stays in cache instead of making
# several passes over an (N × negatives) matrix in memory.
LOGIT_ROWS = 512


class _NegativesLogSumExp(torch.autograd.Function):
    """logsumexp over the rows of hidden·Wᵀ + b, the entry (row, hit_slot[row]) left out where
    hit_slot ≥ 0.

    The same as autograd through addmm and logsumexp, computed in blocks of LOGIT_ROWS rows; the
    backward pass recomputes each block's logits (one more product) instead of keeping them all.
    """

    @staticmethod
    def forward(ctx, hidden, weight, bias, hit_slot):  # type: ignore[no-untyped-def]
        result = torch.empty(len(hidden), dtype=accumulation_dtype(weight.dtype), device=hidden.device)
        for start, logits in _logit_blocks(hidden, weight, bias, hit_slot):
            torch.logsumexp(logits, dim=1, out=result[start : start + len(logits)])
        ctx.save_for_backward(hidden, weight, bias, hit_slot, result)
        return result

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):  # type: ignore[no-untyped-def]
        hidden, weight, bias, hit_slot, result = ctx.saved_tensors
        grad_hidden = torch.empty_like(hidden)
        grad_weight = torch.zeros(weight.shape, dtype=result.dtype, device=weight.device)
        grad_bias = torch.zeros_like(bias)
        for start, logits in _logit_blocks(hidden, weight, bias, hit_slot):
            stop = start + len(logits)
            # softmax × incoming gradient, in place
            weighted = logits.sub_(result[start:stop, None]).exp_().mul_(grad[start:stop, None])
            grad_bias += weighted.sum(0)
            if weight.dtype == result.dtype:
                torch.mm(weighted, weight, out=grad_hidden[start:stop])
                grad_weight.addmm_(weighted.t(), hidden[start:stop])
            else:
                weighted = weighted.to(weight.dtype)
                grad_hidden[start:stop] = weighted @ weight
                grad_weight += weighted.t() @ hidden[start:stop]
        return grad_hidden, grad_weight.to(weight.dtype), grad_bias, None


def _logit_blocks(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, hit_slot: torch.Tensor):  # type: ignore[no-untyped-def]
    """(first row, logits) of each block of rows, at least float32, accidental hits set to −inf.

    The blocks share one buffer: each is valid until the next one is made.
    """
    bias = bias.to(weight.dtype)
    rows = min(LOGIT_ROWS, len(hidden))
    buffer = torch.empty(rows, len(weight), dtype=weight.dtype, device=hidden.device)
    for start in range(0, len(hidden), rows):
        stop = min(start + rows, len(hidden))
        logits = torch.addmm(bias, hidden[start:stop], weight.t(), out=buffer[: stop - start])
        logits = logits.to(accumulation_dtype(logits.dtype))
        slots = hit_slot[start:stop]
        hits = torch.nonzero(slots >= 0).squeeze(1)
        logits[hits, slots[hits]] = float("-inf")
        yield start, logits


def full_softmax_loss(
    hidden: torch.Tensor, targets: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, reduction: str = "mean"
) -> torch.Tensor:
    """Cross-entropy of `hidden` (N, P) against `targets` (N,) over the whole vocabulary."""
    return F.cross_entropy(F.linear(hidden, weight, bias), targets, reduction=reduction)
