"""Input files as a Ray Dataset of rows that keep their source file and line.

Text files (optionally .gz) give a row per line, JSONL files a row per line (its `text_column`
field), Parquet files a row per row (its `text_column` column). Each row is
{"source", "line", "text", "problem"}: a line that is not UTF-8, not JSON or has no string text
keeps its place with `text` null and the reason in `problem`, so nothing is dropped or renumbered.
"""
import glob
import gzip
import io
import json
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import ray

from ..errors import SpacyElmoError

JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")
PARQUET_SUFFIXES = (".parquet", ".pq")
GZIP_MAGIC = b"\x1f\x8b"
# Rows per block: a worker's unit of work (and of retry), and of the Parquet files written.
DEFAULT_BLOCK_ROWS = 256
Row = Dict[str, Any]


def expand_paths(patterns: Sequence[str]) -> List[str]:
    """Local paths and globs as the files they name; other paths (s3://, gs://, ...) as given."""
    paths: List[str] = []
    for pattern in patterns:
        if "://" in pattern:
            paths.append(pattern)
        elif glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                raise SpacyElmoError(f"no input file matches {pattern!r}")
            paths.extend(matches)
        elif os.path.exists(pattern):
            paths.append(pattern)
        else:
            raise SpacyElmoError(f"input file not found: {pattern}")
    return paths


def read_inputs(patterns: Sequence[str], text_column: str = "text", rows_per_block: int = DEFAULT_BLOCK_ROWS) -> "ray.data.Dataset":
    """The rows of the input files, read and cut into blocks of at most `rows_per_block` rows
    before the biLM's workers start, so that every worker gets blocks even from one file, and
    reading has the CPUs to itself (the text waits in Ray's object store, spilled when large)."""
    files = ray.data.read_binary_files(expand_paths(patterns), include_paths=True)
    return files.flat_map(_FileRows(text_column)).repartition(target_num_rows_per_block=rows_per_block).materialize()


class _FileRows:
    """A file's rows, by its suffix."""

    def __init__(self, text_column: str) -> None:
        self.text_column = text_column

    def __call__(self, file: Row) -> List[Row]:
        path, data = file["path"], file["bytes"]
        name = path.lower()
        if name.endswith(".gz"):  # Ray may have decompressed it already
            data, name = gzip.decompress(data) if data[:2] == GZIP_MAGIC else data, name[:-3]
        if name.endswith(PARQUET_SUFFIXES):
            items = _parquet_texts(data, path, self.text_column)
        elif name.endswith(JSON_SUFFIXES):
            items = _json_texts(data, self.text_column)
        else:
            items = _text_lines(data)
        return [{"source": path, "line": i, "text": text, "problem": problem} for i, (text, problem) in enumerate(items)]


def _lines(data: bytes) -> List[bytes]:
    lines = data.split(b"\n")
    return lines[:-1] if lines and lines[-1] == b"" else lines


def _decode(raw: bytes) -> Tuple[Optional[str], Optional[str]]:
    try:
        return raw.decode("utf8").strip(), None
    except UnicodeDecodeError:
        return None, "not UTF-8"


def _text_lines(data: bytes) -> Iterator[Tuple[Optional[str], Optional[str]]]:
    return (_decode(raw) for raw in _lines(data))


def _json_texts(data: bytes, column: str) -> Iterator[Tuple[Optional[str], Optional[str]]]:
    for raw in _lines(data):
        line, problem = _decode(raw)
        if problem is None:
            try:
                record = json.loads(line)
            except ValueError:
                yield None, "not JSON"
                continue
            text = record.get(column) if isinstance(record, dict) else None
            yield (text.strip(), None) if isinstance(text, str) else (None, "not a string")
        else:
            yield None, problem


def _parquet_texts(data: bytes, path: str, column: str) -> Iterator[Tuple[Optional[str], Optional[str]]]:
    import pyarrow.parquet as pq

    names = pq.read_schema(io.BytesIO(data)).names
    if column not in names:
        raise SpacyElmoError(f"{path}: no column {column!r} (columns: {', '.join(names)}); pass the text column's name")
    for text in pq.read_table(io.BytesIO(data), columns=[column])[column].to_pylist():
        yield (text.strip(), None) if isinstance(text, str) else (None, "not a string")
