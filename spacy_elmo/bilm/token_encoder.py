"""The context-independent token encoder: character CNN, highway layers, projection."""
import math

import torch
from torch import nn
from torch.nn import functional as F

from .characters import N_CHARACTER_IDS, PAD_CHAR
from .config import BiLMConfig

# Tokens encoded per CNN call; bounds the memory of the convolution activations.
CHUNK_TOKENS = 128


class Highway(nn.Module):
    """y = t ⊙ relu(x·W_T + b_T) + (1 − t) ⊙ x with t = sigmoid(x·W_C + b_C) (bilm-tf semantics).

    One linear layer computes both halves: output [transform | carry gate].
    """

    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = nn.Linear(width, 2 * width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        transform, gate = self.linear(x).chunk(2, dim=-1)
        gate = torch.sigmoid(gate)
        return x + gate * (torch.relu(transform) - x)


class CharTokenEncoder(nn.Module):
    """Encode (N, M) character ids into (N, P) token embeddings (ELMo layer 0)."""

    def __init__(self, config: BiLMConfig) -> None:
        super().__init__()
        self.config = config
        self.char_embedding = nn.Embedding(N_CHARACTER_IDS, config.char_embedding_dim, padding_idx=0)
        self.convolutions = nn.ModuleList(
            nn.Conv1d(config.char_embedding_dim, count, width) for width, count in config.filters
        )
        self.highways = nn.ModuleList(Highway(config.n_filters) for _ in range(config.n_highway))
        self.projection = (
            nn.Linear(config.n_filters, config.projection_dim) if config.has_token_projection else None
        )
        self._activation = torch.relu if config.activation == "relu" else torch.tanh

    def reset_parameters(self) -> None:
        """The bilm-tf initialisation (ELMO.md §5.2)."""
        config = self.config
        with torch.no_grad():
            nn.init.uniform_(self.char_embedding.weight, -1.0, 1.0)
            self.char_embedding.weight[0].zero_()
            for conv, (width, _) in zip(self.convolutions, config.filters):
                if config.activation == "relu":
                    nn.init.uniform_(conv.weight, -0.05, 0.05)
                else:
                    nn.init.normal_(conv.weight, 0.0, math.sqrt(1.0 / (width * config.char_embedding_dim)))
                conv.bias.zero_()
            std = math.sqrt(1.0 / config.n_filters)
            for highway in self.highways:
                nn.init.normal_(highway.linear.weight, 0.0, std)
                highway.linear.bias[: config.n_filters].zero_()
                highway.linear.bias[config.n_filters :].fill_(-2.0)
            if self.projection is not None:
                nn.init.normal_(self.projection.weight, 0.0, std)
                self.projection.bias.zero_()

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        """Encode character ids of shape (N, M) to embeddings (N, P)."""
        if char_ids.shape[0] > CHUNK_TOKENS and not torch.is_grad_enabled():
            return torch.cat([self._encode(chunk) for chunk in char_ids.split(CHUNK_TOKENS)])
        return self._encode(char_ids)

    def _encode(self, char_ids: torch.Tensor) -> torch.Tensor:
        char_ids = self._trim(char_ids)
        chars = self.char_embedding(char_ids).transpose(1, 2)  # (N, E, M')
        pooled = [conv(chars).amax(dim=-1) for conv in self.convolutions]
        x = self._activation(torch.cat(pooled, dim=-1))
        for highway in self.highways:
            x = highway(x)
        return self.projection(x) if self.projection is not None else x

    def _trim(self, char_ids: torch.Tensor) -> torch.Tensor:
        """Drop trailing PAD positions where this leaves every max-pool unchanged.

        Exact as long as each filter still sees one all-PAD window (ELMO.md §4.4):
        keep the longest token (with begin/end of word) plus the widest filter.
        """
        used = ((char_ids != PAD_CHAR) & (char_ids != 0)).sum(dim=1).max().item() if len(char_ids) else 0
        keep = int(used) + self.config.max_filter_width
        return char_ids[:, :keep] if keep < char_ids.shape[1] else char_ids
