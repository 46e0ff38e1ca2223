"""Reading helpers shared by the converters: plain or gzipped text, and spaces from `# text`."""

import gzip
from pathlib import Path
from typing import List, TextIO


def open_text(path: Path) -> TextIO:
    """Open a UTF-8 text file, gunzipping `.gz` files; a missing file is a clear error."""
    if not Path(path).is_file():
        raise SystemExit(f"error: no such file: {path}")
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf8")
    return open(path, encoding="utf8")


def spaces_from_text(words: List[str], text: str) -> List[bool]:
    """Whether each word is followed by whitespace in `text`; all True if the words are not
    found in order in `text` (some UNER `# text` lines predate tokenization fixes)."""
    spaces, position = [], 0
    for word in words:
        found = text.find(word, position)
        if found < 0 or text[position:found].strip():
            return [True] * len(words)
        position = found + len(word)
        spaces.append(text[position : position + 1].isspace())
    return spaces
