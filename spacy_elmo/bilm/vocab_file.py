"""`vocab.txt`: the softmax vocabulary as one token per line (the bilm-tf format)."""
from pathlib import Path
from typing import List, Sequence, Type, Union

from ..errors import SpacyElmoError

VOCAB_FILE = "vocab.txt"


def read_vocab(path: Union[str, Path], error: Type[SpacyElmoError] = SpacyElmoError) -> List[str]:
    """The tokens of a vocabulary file, in id order.

    error (Type[SpacyElmoError]): the exception raised for a missing, undecodable or malformed
        file (the message names the file and the line).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf8")
    except FileNotFoundError:
        raise error(f"vocabulary file not found: {path}") from None
    except UnicodeDecodeError as err:
        raise error(f"{path}: the vocabulary is not UTF-8 ({err.reason} at byte {err.start})") from None
    tokens = [line.strip() for line in text.splitlines()]
    if any(not token for token in tokens):
        raise error(f"{path}: line {tokens.index('') + 1} is empty; expected one token per line")
    return tokens


def write_vocab(path: Union[str, Path], tokens: Sequence[str]) -> None:
    """Write one token per line."""
    Path(path).write_text("".join(token + "\n" for token in tokens), encoding="utf8")
