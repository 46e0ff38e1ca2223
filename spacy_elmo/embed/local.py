"""The local engine of `embed`: one process, one UTF-8 text file, one hdf5 file in AllenNLP's
layout (`hdf5_file.py`). The Ray engine, for many files and machines, is `spacy_elmo.ray_data`."""
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import SpacyElmoError
from ..runtime import set_threads
from .lines import LineEmbedder, nothing_to_embed
from .settings import EmbedSettings


def embed_file(
    input_path: Path,
    output: Path,
    settings: EmbedSettings,
    *,
    threads: Optional[int] = None,
    overwrite: bool = False,
    progress: bool = False,
) -> Dict[str, Any]:
    """Embed each line of `input_path` into the hdf5 file `output` (lines stripped, blank lines
    refused); nothing is written where the input or the settings are refused.

    threads (Optional[int]): torch threads (default: torch's, at most the CPUs this process may use).
    overwrite (bool): replace an existing `output`; without it, an existing file is an error.
    RETURNS (Dict[str, Any]): "rows", "tokens", "seconds" and "problems" (none: blank lines are refused).
    """
    from .hdf5_file import check_lines, write_embedding_file

    start = time.perf_counter()
    if not input_path.is_file():
        raise SpacyElmoError(f"input file not found: {input_path}")
    if not output.parent.is_dir():
        raise SpacyElmoError(f"the folder of the output file does not exist: {output.parent}")
    if output.exists() and not overwrite:
        raise SpacyElmoError(f"{output} already exists; name a new file, or pass --overwrite")
    lines = read_lines(input_path)
    if not lines:
        raise SpacyElmoError(nothing_to_embed([str(input_path)]))
    check_lines(lines, input_path)
    set_threads(threads)
    embedder = LineEmbedder(settings)
    tokens = [0]
    items = _counted(embedded_lines(embedder, lines, settings.model.batch_size), tokens)
    if progress:
        from tqdm import tqdm

        items = tqdm(items, total=len(lines), unit="line")
    rows = write_embedding_file(output, items)
    return {"rows": rows, "tokens": tokens[0], "seconds": time.perf_counter() - start, "problems": []}


def embedded_lines(embedder: LineEmbedder, lines: Sequence[str], chunk: int) -> Iterator[Tuple[str, np.ndarray]]:
    """(line, layers) for each line, `chunk` lines at a time."""
    for start in range(0, len(lines), chunk):
        part = lines[start : start + chunk]
        for line, (_, layers) in zip(part, embedder(part)):
            yield line, layers


def read_lines(path: Path) -> List[str]:
    """The stripped lines of a UTF-8 text file; a line that is not UTF-8 is an error naming file:line."""
    lines = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                lines.append(raw.decode("utf8").strip())
            except UnicodeDecodeError as err:
                raise SpacyElmoError(
                    f"{path}:{number}: not UTF-8 text ({err.reason} at byte {err.start}); embed reads UTF-8 text files"
                ) from None
    return lines


def _counted(items: Iterator[Tuple[str, np.ndarray]], tokens: List[int]) -> Iterator[Tuple[str, np.ndarray]]:
    for line, layers in items:
        tokens[0] += layers.shape[-2]  # (n_layers, n_tokens, width) or one layer (n_tokens, width)
        yield line, layers
