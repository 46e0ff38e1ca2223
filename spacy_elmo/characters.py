"""Token strings to the character ids of the original ELMo (UTF-8 bytes, +1 shifted); no torch here."""
from typing import Sequence

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
