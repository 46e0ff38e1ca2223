"""The biLM with its training loss in one module (what DistributedDataParallel wraps)."""

from typing import List, Optional, Tuple

import torch
from torch import nn
from torch.nn import functional as F

from .batcher import TensorBatch
from .sampled_softmax import LogUniformSampler, full_softmax_loss, sampled_softmax_loss

LstmState = List[Tuple[torch.Tensor, torch.Tensor]]


def top_layer(
    bilm: nn.Module, batch: TensorBatch, state: Optional[LstmState], dropout: float = 0.0
) -> Tuple[torch.Tensor, LstmState]:
    """Top LSTM outputs (2, B, T, P) of both directions for a batch, and the final LSTM state.

    Each distinct token is encoded once and shared by both directions (one token encoder).
    """
    outputs, new_state = bilm.lm_layers(batch.char_ids, batch.token_index, batch.lengths, state, dropout=dropout)
    top = outputs[-1]
    if dropout > 0.0 and bilm.training:
        top = F.dropout(top, dropout, training=True)
    return top, new_state


class BiLMObjective(nn.Module):
    """Forward and backward LM losses of a biLM whose softmax is shared by both directions.

    bilm (BiLM): the model, with `softmax` and `vocab` set.
    n_negative_samples (int): sampled-softmax negatives; the full softmax is used when the
        vocabulary has no more entries than this.
    dropout (float): on each LSTM layer's input and on the top layer, in training mode.
    seed (int): seeds `generator`, which draws the negatives.
    compute_dtype (torch.dtype): type of the sampled softmax's products (torch.bfloat16 under
        bfloat16 autocast); the loss is float32.
    """

    def __init__(
        self,
        bilm: nn.Module,
        n_negative_samples: int,
        dropout: float,
        seed: int = 0,
        compute_dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        self.compute_dtype = compute_dtype
        if bilm.softmax is None or bilm.vocab is None:
            raise ValueError("the biLM needs a softmax and vocabulary to be trained")
        self.bilm = bilm
        self.dropout = dropout
        vocab_size = len(bilm.vocab)
        self.sampler = (
            LogUniformSampler(vocab_size, n_negative_samples) if n_negative_samples < vocab_size else None
        )
        self.generator = torch.Generator().manual_seed(seed)

    def forward(self, batch: TensorBatch, state: Optional[LstmState]) -> Tuple[torch.Tensor, LstmState]:
        """Mean losses (2,) of the forward and backward LM over the batch, and the new LSTM state.

        In training each direction draws its own negatives, as bilm-tf does.
        """
        top, new_state = top_layer(self.bilm, batch, state, self.dropout)
        softmax = self.bilm.softmax
        losses = []
        for direction in range(2):
            hidden = top[direction][batch.mask]
            targets = batch.targets[direction][batch.mask]
            if self.sampler is not None and self.training:
                loss = sampled_softmax_loss(
                    hidden,
                    targets,
                    softmax.weight,
                    softmax.bias,
                    self.sampler,
                    self.generator,
                    compute_dtype=self.compute_dtype,
                )
            else:
                loss = full_softmax_loss(hidden, targets, softmax.weight, softmax.bias)
            losses.append(loss)
        return torch.stack(losses), new_state
