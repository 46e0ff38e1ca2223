"""Paths and files: the type of a path argument, a file's sha256, and an output written beside
its place and moved there only once complete."""
import hashlib
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Union

PathLike = Union[str, Path]


def sha256(path: PathLike) -> str:
    """The hex sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def staged_output(output: PathLike) -> Iterator[Path]:
    """Write a file or folder beside `output` and move it there only once the body of the `with`
    has written and checked it, so that `output` is only ever absent, as it was, or complete. On
    any exception, Ctrl-C included, what was staged is removed and `output` is left as it was.
    A new folder replaces whatever is at `output` (the caller checks first that it may); a new
    file replaces a file.

    output (PathLike): the file or folder to write; its parent folders are made.
    YIELDS (Path): where to write it, `.NAME.partial-PID` beside `output`; not there yet.
    """
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    staging = _beside(output, "partial")
    try:
        yield staging
        if staging.is_dir() and output.exists():  # os.replace puts a folder only where none or an empty one is
            replaced = _beside(output, "replaced")
            os.replace(output, replaced)
            os.replace(staging, output)
            _remove(replaced)
        else:
            os.replace(staging, output)
    finally:
        _remove(staging)


def _beside(path: Path, purpose: str) -> Path:
    """A hidden name in `path`'s folder for this process: `.NAME.PURPOSE-PID`."""
    return path.with_name(f".{path.name}.{purpose}-{os.getpid()}")


def _remove(path: Path) -> None:
    """Remove a file or folder, if there is one."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
