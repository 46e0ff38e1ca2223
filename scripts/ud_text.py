"""Reading plain or gzipped text, for the converters and the corpus preparation."""

import gzip
from pathlib import Path
from typing import TextIO


def open_text(path: Path) -> TextIO:
    """Open a UTF-8 text file, gunzipping `.gz` files; a missing file is a clear error."""
    if not Path(path).is_file():
        raise SystemExit(f"error: no such file: {path}")
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf8")
    return open(path, encoding="utf8")
