"""Token strings to character ids: the original ELMo's (UTF-8 bytes, +1 shifted) and those of a
learned vocabulary (ELMoForManyLangs); no torch here."""
import json
from typing import Any, Dict, Sequence

import numpy as np

from .batching import Sentences

BOS_TOKEN = "<S>"
EOS_TOKEN = "</S>"

# Ids as fed to the model: the raw ids of bilm-tf plus one, so that 0 marks a padded token slot.
BOS_CHAR = 257
EOS_CHAR = 258
BOW_CHAR = 259
EOW_CHAR = 260
PAD_CHAR = 261
N_CHARACTER_IDS = 262

# The special entries of learned vocabularies (ELMoForManyLangs' char.dic and word.dic).
BOS, EOS, OOV, PAD, BOW, EOW = "<bos>", "<eos>", "<oov>", "<pad>", "<bow>", "<eow>"
CHARACTER_SPECIALS = (BOS, EOS, OOV, PAD, BOW, EOW)
WORD_SPECIALS = (BOS, EOS, OOV)


class CharacterMapper:
    """Map tokens to rows of `max_characters` ids: [BOW, bytes…, EOW, PAD…].

    The strings "<S>" and "</S>" map to the sentence-marker ids, as in the original.
    Tokens longer than `max_characters - 2` UTF-8 bytes are truncated (bytes, not characters).
    """

    def __init__(self, max_characters: int) -> None:
        self.max_characters = max_characters
        self.max_bytes = max_characters - 2

    def encode(self, tokens: Sequence[str]) -> np.ndarray:
        """Return the int64 array (len(tokens), max_characters) of character ids."""
        ids = np.full((len(tokens), self.max_characters), PAD_CHAR, dtype=np.int64)
        ids[:, 0] = BOW_CHAR
        for row, token in enumerate(tokens):
            if token == BOS_TOKEN or token == EOS_TOKEN:
                ids[row, 1] = BOS_CHAR if token == BOS_TOKEN else EOS_CHAR
                ids[row, 2] = EOW_CHAR
                continue
            data = token.encode("utf-8", "ignore")[: self.max_bytes]
            n = len(data)
            ids[row, 1 : n + 1] = np.frombuffer(data, dtype=np.uint8).astype(np.int64) + 1
            ids[row, n + 1] = EOW_CHAR
        return ids

    def encode_batch(self, sentences: Sentences) -> np.ndarray:
        """Return the int64 array (len(sentences), longest, max_characters) of the sentences'
        character ids, as AllenNLP's `batch_to_ids` makes them: padded token slots are all 0."""
        longest = max((len(sentence) for sentence in sentences), default=0)
        ids = np.zeros((len(sentences), longest, self.max_characters), dtype=np.int64)
        for row, sentence in enumerate(sentences):
            if sentence:
                ids[row, : len(sentence)] = self.encode(sentence)
        return ids


class LexiconMapper:
    """Map tokens to rows of M + 1 ids in learned vocabularies (ELMoForManyLangs; the token
    mapping of `spacy_elmo.bilm.lexicon.Lexicon`, and of an exported graph's runner).

    characters (Dict[str, int]): character to id, holding CHARACTER_SPECIALS.
    words (Dict[str, int]): word to id; empty without word embedding.
    max_characters (int): M, character slots per token, begin and end of word included.
    """

    def __init__(self, characters: Dict[str, int], words: Dict[str, int], max_characters: int) -> None:
        self.characters = characters
        self.words = words
        self.max_characters = max_characters

    def encode(self, tokens: Sequence[str]) -> np.ndarray:
        """The int64 array (len(tokens), M + 1): each token's M character ids, then its word id.

        As the original: tokens are cut to M - 2 characters (code points) before both look-ups;
        the first slot holds the id of "<eow>" and the slot after the last character that of
        "<bow>" (its `create_one_batch` assigns them swapped, and the models were trained so);
        unknown characters and words map to "<oov>"; "<S>" and "</S>" are "<bos>" and "<eos>".
        """
        chars, words = self.characters, self.words
        first, last, oov = chars[EOW], chars[BOW], chars[OOV]
        word_oov = words.get(OOV, 0)
        ids = np.full((len(tokens), self.max_characters + 1), chars[PAD], dtype=np.int64)
        ids[:, 0] = first
        for row, token in enumerate(tokens):
            token = BOS if token == BOS_TOKEN else EOS if token == EOS_TOKEN else token
            if token in (BOS, EOS):
                ids[row, 1], ids[row, 2] = chars[token], last
            else:
                token = token[: self.max_characters - 2]
                ids[row, 1 : len(token) + 1] = [chars.get(c, oov) for c in token]
                ids[row, len(token) + 1] = last
            ids[row, -1] = words.get(token, word_oov)
        return ids

    def to_json(self) -> str:
        """The vocabularies as the JSON that `from_json` reads."""
        return json.dumps({"characters": self.characters, "words": self.words}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, max_characters: int) -> "LexiconMapper":
        """The mapper whose vocabularies `to_json` wrote; ValueError, one line, where `text` is not that."""
        try:
            data: Any = json.loads(text)
        except ValueError as err:
            raise ValueError(f"not JSON ({err})") from None
        if not isinstance(data, dict):
            raise ValueError(f"expected an object with 'characters' and 'words', got {type(data).__name__}")
        vocabularies = []
        for key, specials in (("characters", CHARACTER_SPECIALS), ("words", WORD_SPECIALS)):
            vocabulary = data.get(key)
            if not isinstance(vocabulary, dict) or not all(
                isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in vocabulary.values()
            ):
                raise ValueError(f"'{key}' must be an object of non-negative integer ids")
            missing = [s for s in specials if s not in vocabulary]
            if missing and (vocabulary or key == "characters"):  # no words: no word embedding
                raise ValueError(f"the {key} lack the special entries {', '.join(missing)}")
            vocabularies.append(vocabulary)
        return cls(vocabularies[0], vocabularies[1], max_characters)
