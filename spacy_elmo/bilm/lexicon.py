"""Learned character and word vocabularies: the token input of ELMoForManyLangs models.

ELMoForManyLangs (Che et al., 2018; HIT-SCIR/ELMoForManyLangs) replaces bilm-tf's 262 byte ids
with a character vocabulary learned from the training text, and concatenates a word embedding
to the character CNN's output. A `Lexicon` maps token strings to those ids, exactly as the
original's `create_one_batch` (elmoformanylangs/frontend.py) fills its batches, through its
`LexiconMapper` (`spacy_elmo.characters`, no torch: the ONNX runner's mapping too).
"""
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..characters import CHARACTER_SPECIALS, PAD, WORD_SPECIALS, LexiconMapper
from .errors import ModelFormatError

OPTIONS_KEY = "lexicon"
CONVENTION = "elmoformanylangs"


@dataclass(frozen=True)
class Lexicon:
    """The character and word vocabularies of a model and how tokens map onto them.

    characters (Dict[str, int]): character to row of the character embedding.
    n_characters (int): rows of the character embedding.
    words (Dict[str, int]): word to row of the word embedding; empty without word embedding.
    n_words (int): rows of the word embedding; 0 without word embedding.
    word_dim (int): width of the word embedding; 0 without word embedding.
    max_characters (int): M, character slots per token, begin and end of word included.
    """

    characters: Dict[str, int]
    n_characters: int
    words: Dict[str, int]
    n_words: int
    word_dim: int
    max_characters: int

    def __post_init__(self) -> None:
        needed: List[Tuple[str, Tuple[str, ...], Dict[str, int]]] = [("character (char.dic)", CHARACTER_SPECIALS, self.characters)]
        if self.word_dim:
            needed.append(("word (word.dic)", WORD_SPECIALS, self.words))
        for kind, specials, vocabulary in needed:
            missing = [s for s in specials if s not in vocabulary]
            if missing:
                raise ModelFormatError(f"the {kind} vocabulary lacks the special entries {', '.join(missing)}")
        for kind, vocabulary, rows in (("character", self.characters, self.n_characters), ("word", self.words, self.n_words)):
            for token, index in vocabulary.items():
                if not 0 <= index < rows:
                    raise ModelFormatError(
                        f"the {kind} vocabulary gives {token!r} the id {index}, but the {kind} embedding has {rows} rows"
                    )

    @classmethod
    def from_options_json(cls, options: Dict[str, Any], max_characters: int) -> Optional["Lexicon"]:
        """The lexicon that the "lexicon" section of an ``options.json`` dict describes; None for byte characters."""
        section = options.get(OPTIONS_KEY)
        if section is None:
            return None
        if not isinstance(section, dict) or section.get("convention") != CONVENTION:
            raise ModelFormatError(f"options: '{OPTIONS_KEY}' must be an object with \"convention\": \"{CONVENTION}\"")
        try:
            return cls(
                characters={str(k): int(v) for k, v in section["characters"].items()},
                n_characters=int(section["n_characters"]),
                words={str(k): int(v) for k, v in section.get("words", {}).items()},
                n_words=int(section.get("n_words", 0)),
                word_dim=int(section.get("word_dim", 0)),
                max_characters=max_characters,
            )
        except (KeyError, AttributeError, TypeError, ValueError) as err:
            raise ModelFormatError(f"options: invalid '{OPTIONS_KEY}' section ({err!r})") from None

    def to_options_json(self) -> Dict[str, Any]:
        """The ``options.json`` "lexicon" section that `from_options_json` reads."""
        section: Dict[str, Any] = {
            "convention": CONVENTION,
            "characters": self.characters,
            "n_characters": self.n_characters,
        }
        if self.word_dim:
            section.update(words=self.words, n_words=self.n_words, word_dim=self.word_dim)
        return section

    @property
    def pad_id(self) -> int:
        return self.characters[PAD]

    @cached_property
    def mapper(self) -> LexiconMapper:
        """The torch-free token mapping of these vocabularies."""
        return LexiconMapper(self.characters, self.words, self.max_characters)

    def encode(self, tokens: Sequence[str]) -> np.ndarray:
        """The int64 array (len(tokens), M + 1): each token's M character ids, then its word id
        (`LexiconMapper.encode`, the original's convention)."""
        return self.mapper.encode(tokens)
