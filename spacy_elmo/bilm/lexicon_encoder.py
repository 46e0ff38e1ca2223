"""The token encoder of ELMoForManyLangs: character CNN over learned characters, plus words."""
import torch
from torch import nn

from .architecture import BiLMArchitecture
from .lexicon import Lexicon
from .token_encoder import CharTokenEncoder


class LexiconTokenEncoder(CharTokenEncoder):
    """Encode (N, M + 1) ids (`Lexicon.encode`) into (N, P) token embeddings.

    As `ConvTokenEmbedder` of elmoformanylangs/modules/token_embedder.py: the character CNN and
    highway layers run over the learned character vocabulary, the word embedding is concatenated
    before them, and a linear projection with bias maps the concatenation to P.
    """

    def __init__(self, config: BiLMArchitecture, lexicon: Lexicon) -> None:
        super().__init__(config)
        self.pad_id = lexicon.pad_id
        self.char_embedding = nn.Embedding(lexicon.n_characters, config.char_embedding_dim)
        self.word_embedding = nn.Embedding(lexicon.n_words, lexicon.word_dim) if lexicon.word_dim else None
        self.projection = nn.Linear(lexicon.word_dim + config.n_filters, config.projection_dim)

    def _used_lengths(self, char_ids: torch.Tensor) -> torch.Tensor:
        return (char_ids[:, :-1] != self.pad_id).sum(dim=1)

    def _encode(self, char_ids: torch.Tensor, longest: int) -> torch.Tensor:
        x = self._char_features(char_ids[:, :-1], longest)
        if self.word_embedding is not None:
            x = torch.cat([self.word_embedding(char_ids[:, -1]), x], dim=-1)
        return self.projection(x)
