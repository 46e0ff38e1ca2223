"""Softmax losses over the vocabulary: sampled (training) and full (evaluation).

The sampled loss is TensorFlow's `sampled_softmax_loss` with its default log-uniform (Zipf)
sampler, as bilm-tf trains: one set of unique negatives per call shared by all positions,
logits corrected by −log(expected count), accidental hits of the true id removed.
"""

import math
from typing import Optional, Tuple

import torch
from torch.nn import functional as F


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
) -> torch.Tensor:
    """Mean sampled-softmax cross-entropy of `hidden` (N, P) against `targets` (N,).

    weight (Tensor): (V, P) softmax weights; bias (Tensor): (V,).
    """
    sampled, n_tries = sampler.sample(generator)
    sampled = sampled.to(hidden.device)
    log_q_true = torch.log(sampler.expected_count(targets.cpu(), n_tries)).to(hidden.device, hidden.dtype)
    log_q_sampled = torch.log(sampler.expected_count(sampled.cpu(), n_tries)).to(hidden.device, hidden.dtype)
    true_logits = (hidden * weight[targets]).sum(-1) + bias[targets] - log_q_true
    # Accidental hits (a target among the negatives) are removed: at most one per row.
    slot = torch.full((weight.shape[0],), -1, dtype=torch.int64, device=hidden.device)
    slot[sampled] = torch.arange(len(sampled), device=hidden.device)
    hit_slot = slot[targets]
    hit_rows = torch.nonzero(hit_slot >= 0).squeeze(1)
    negatives = _NegativesLogSumExp.apply(
        hidden, weight[sampled], bias[sampled] - log_q_sampled, hit_rows, hit_slot[hit_rows]
    )
    return (torch.logaddexp(true_logits, negatives) - true_logits).mean()


class _NegativesLogSumExp(torch.autograd.Function):
    """logsumexp over the rows of hidden·Wᵀ + b with the (hit_rows, hit_cols) entries left out.

    The same as autograd through addmm and logsumexp, with fewer passes over the large
    (N, n_samples) logits: the backward pass turns the saved logits into the softmax in place.
    """

    @staticmethod
    def forward(ctx, hidden, weight, bias, hit_rows, hit_cols):  # type: ignore[no-untyped-def]
        logits = torch.addmm(bias, hidden, weight.t())
        logits[hit_rows, hit_cols] = float("-inf")
        result = torch.logsumexp(logits, dim=1)
        ctx.save_for_backward(hidden, weight, logits, result)
        return result

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):  # type: ignore[no-untyped-def]
        hidden, weight, logits, result = ctx.saved_tensors
        weighted = logits.sub_(result.unsqueeze(1)).exp_().mul_(grad.unsqueeze(1))  # softmax × grad
        return weighted @ weight, weighted.t() @ hidden, weighted.sum(0), None, None


def full_softmax_loss(
    hidden: torch.Tensor, targets: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, reduction: str = "mean"
) -> torch.Tensor:
    """Cross-entropy of `hidden` (N, P) against `targets` (N,) over the whole vocabulary."""
    return F.cross_entropy(F.linear(hidden, weight, bias), targets, reduction=reduction)
