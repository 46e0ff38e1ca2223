"""Reading corpus files: plain or gzipped UTF-8 text, with errors that name the file and line."""
import gzip
from pathlib import Path
from typing import Iterator, Tuple

from ..errors import SpacyElmoError


def read_lines(path: Path) -> Iterator[Tuple[int, str]]:
    """(line number, line without its line break) of a UTF-8 text file, gunzipping `.gz` files;
    a missing file or bad UTF-8 is a `SpacyElmoError` naming the file (and the line)."""
    path = Path(path)
    if not path.is_file():
        raise SpacyElmoError(f"no such file: {path}")
    # Decoded line by line: a text-mode reader decodes in chunks, so its error comes before the
    # lines that precede the bad byte and cannot name the line.
    with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as lines:
        for number, raw in enumerate(lines, 1):
            try:
                line = raw.decode("utf8")
            except UnicodeDecodeError as err:
                raise SpacyElmoError(f"{path}:{number}: not UTF-8 text ({err.reason})") from None
            line = line[:-1] if line.endswith("\n") else line
            yield number, line[:-1] if line.endswith("\r") else line
