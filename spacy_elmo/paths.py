"""Paths and files: the type of a path argument, and a file's sha256."""
import hashlib
from pathlib import Path
from typing import Union

PathLike = Union[str, Path]


def sha256(path: PathLike) -> str:
    """The hex sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
