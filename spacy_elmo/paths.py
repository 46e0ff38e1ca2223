"""The type of a path argument: a string or a `Path`."""
from pathlib import Path
from typing import Union

PathLike = Union[str, Path]
