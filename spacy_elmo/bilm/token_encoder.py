"""The context-independent token encoder: character CNN, highway layers, projection."""
import bisect
import math

import torch
from torch import nn

from ..characters import N_CHARACTER_IDS, PAD_CHAR
from .architecture import BiLMArchitecture

# Tokens encoded per CNN call; bounds the memory of the convolution activations.
CHUNK_TOKENS = 128
# Tokens are encoded in groups by length (begin/end of word included) up to these bounds, each
# group only as wide as it needs; a group has at least MIN_GROUP_TOKENS tokens.
LENGTH_GROUPS = (6, 9, 12, 16)
MIN_GROUP_TOKENS = 32


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

    def __init__(self, config: BiLMArchitecture) -> None:
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
        """The initialisation of bilm-tf's `model.py` (`_build_word_char_embeddings`)."""
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
            return torch.cat([self._encode_by_length(chunk) for chunk in char_ids.split(CHUNK_TOKENS)])
        return self._encode_by_length(char_ids)

    def _encode_by_length(self, char_ids: torch.Tensor) -> torch.Tensor:
        """Encode tokens in groups of similar length, each trimmed to its own width (exact)."""
        used = self._used_lengths(char_ids)
        if len(char_ids) < 2 * MIN_GROUP_TOKENS:
            return self._encode(char_ids, int(used.max()) if len(used) else 0)
        order = torch.argsort(used, stable=True)
        sorted_used = used[order].tolist()
        groups, start = [], 0
        for bound in LENGTH_GROUPS:
            stop = bisect.bisect_right(sorted_used, bound, lo=start)
            if stop - start >= MIN_GROUP_TOKENS and len(sorted_used) - stop >= MIN_GROUP_TOKENS:
                groups.append((start, stop))
                start = stop
        groups.append((start, len(sorted_used)))
        encoded = [self._encode(char_ids[order[a:b]], sorted_used[b - 1]) for a, b in groups]
        return torch.cat(encoded)[torch.argsort(order)]

    def _used_lengths(self, char_ids: torch.Tensor) -> torch.Tensor:
        """Character positions of each token before its padding (begin/end of word included)."""
        return ((char_ids != PAD_CHAR) & (char_ids != 0)).sum(dim=1)

    def _encode(self, char_ids: torch.Tensor, longest: int) -> torch.Tensor:
        x = self._char_features(char_ids, longest)
        return self.projection(x) if self.projection is not None else x

    def _char_features(self, char_ids: torch.Tensor, longest: int) -> torch.Tensor:
        """The character CNN and highway layers: (N, M) ids to (N, F) features."""
        # Trailing PAD positions leave every max-pool unchanged as long as each filter still
        # sees one all-PAD window: keep the longest token plus the widest filter.
        keep = longest + self.config.max_filter_width
        if keep < char_ids.shape[1]:
            char_ids = char_ids[:, :keep]
        chars = self.char_embedding(char_ids).transpose(1, 2)  # (N, E, M')
        pooled = [conv(chars).max(dim=-1).values for conv in self.convolutions]
        x = self._activation(torch.cat(pooled, dim=-1))
        for highway in self.highways:
            x = highway(x)
        return x
