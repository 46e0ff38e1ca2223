"""The softmax vocabulary: frequency-sorted tokens with <S>, </S>, <UNK> first."""

import math
from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Union

from ..characters import BOS_TOKEN as BOS
from ..characters import EOS_TOKEN as EOS
from ..bilm.vocab_file import read_vocab, write_vocab
from .errors import CorpusError

UNK = "<UNK>"
SPECIALS = (BOS, EOS, UNK)


class SoftmaxVocab:
    """Map tokens to softmax ids; unknown tokens map to <UNK>.

    tokens (Sequence[str]): the vocabulary in id order; must start with <S>, </S>, <UNK>.
    """

    def __init__(self, tokens: Sequence[str]) -> None:
        tokens = list(tokens)
        if tuple(tokens[:3]) != SPECIALS:
            raise CorpusError(f"a vocabulary must start with {', '.join(SPECIALS)}; got {tokens[:3]}")
        if len(set(tokens)) != len(tokens):
            duplicate = next(t for t, n in Counter(tokens).items() if n > 1)
            raise CorpusError(f"the vocabulary lists {duplicate!r} twice")
        self.tokens: List[str] = tokens
        self.index: Dict[str, int] = {token: i for i, token in enumerate(tokens)}
        self.unk_id = 2

    def __len__(self) -> int:
        return len(self.tokens)

    def ids(self, tokens: Iterable[str]) -> List[int]:
        """The id of each token, <UNK> for unknown ones."""
        index, unk = self.index, self.unk_id
        return [index.get(token, unk) for token in tokens]

    @classmethod
    def from_counts(cls, counts: Counter, max_size: Optional[int] = None, min_count: int = 1) -> "SoftmaxVocab":
        """Most frequent tokens first (ties in first-seen order), after the three special tokens.

        max_size (Optional[int]): most entries including the specials.
        min_count (int): least number of occurrences of a kept token.
        """
        if max_size is not None and max_size < len(SPECIALS) + 1:
            raise CorpusError(f"the vocabulary size limit must be at least {len(SPECIALS) + 1}, got {max_size}")
        ranked = [t for t, n in counts.most_common() if n >= min_count and t not in SPECIALS]
        if max_size is not None:
            ranked = ranked[: max_size - len(SPECIALS)]
        return cls(list(SPECIALS) + ranked)

    def log_frequencies(self, counts: Counter, n_sentences: int) -> List[float]:
        """Log unigram probability of each entry as a target of the two LMs: every token is a
        target once per direction, and each sentence adds one </S> (forward) and one <S>
        (backward); <UNK> takes the tokens outside the vocabulary. Counts are smoothed by 1.
        """
        n_tokens = sum(counts.values())
        known = sum(counts[t] for t in self.tokens[len(SPECIALS) :])
        total = 2 * (n_tokens + n_sentences)
        special = {BOS: n_sentences, EOS: n_sentences, UNK: 2 * (n_tokens - known)}
        return [
            math.log((special[t] if t in special else 2 * counts[t]) + 1) - math.log(total + len(self.tokens))
            for t in self.tokens
        ]

    @classmethod
    def from_file(cls, path: Union[str, Path]) -> "SoftmaxVocab":
        """Read one token per line (the bilm-tf vocabulary format)."""
        tokens = read_vocab(path, CorpusError)
        try:
            return cls(tokens)
        except CorpusError as err:
            raise CorpusError(f"{path}: {err}") from None

    def to_file(self, path: Union[str, Path]) -> None:
        """Write one token per line."""
        write_vocab(path, self.tokens)
