"""Opening corpus files: plain or gzipped UTF-8 text, with errors that name the file."""
import gzip
from pathlib import Path
from typing import TextIO

from ..errors import SpacyElmoError


def open_text(path: Path) -> TextIO:
    """Open a UTF-8 text file, gunzipping `.gz` files; a missing file is a `SpacyElmoError`."""
    path = Path(path)
    if not path.is_file():
        raise SpacyElmoError(f"no such file: {path}")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf8")
    return open(path, encoding="utf8")


def read_lines(path: Path):
    """(line number, line without its newline) of a text file; bad UTF-8 names the line."""
    with open_text(path) as lines:
        number = 0
        try:
            for number, line in enumerate(lines, 1):
                yield number, line.rstrip("\n")
        except UnicodeDecodeError as err:
            raise SpacyElmoError(f"{path}:{number + 1}: not UTF-8 text ({err.reason})") from None
