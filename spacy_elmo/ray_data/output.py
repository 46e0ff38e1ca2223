"""The Parquet rows that `embed --engine ray` writes, and reading them back with pyarrow alone.

One row per input row (a line of a text or JSONL file, a row of a Parquet file):

| column    | type          | what                                                              |
|-----------|---------------|-------------------------------------------------------------------|
| `source`  | string        | the input file's path, as Ray read it                             |
| `line`    | int64         | 0-based index of the line (or row) in that file                   |
| `text`    | string        | the line, stripped (null if it was not text)                      |
| `problem` | string        | null, or why the row has no tokens: "empty", "not a string", "not UTF-8", "not JSON" |
| `tokens`  | list<string>  | the tokens the biLM read                                          |
| `shape`   | list<int32>   | (n_layers or 1, n_tokens, width) of `vectors`                     |
| `dtype`   | string        | "float32" or "float16"                                            |
| `vectors` | binary        | the layers, C order, little-endian                                |

With pandas: ``np.frombuffer(row.vectors, row.dtype).reshape(row.shape)``.
"""
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

import numpy as np

VECTOR_COLUMNS = ("tokens", "shape", "dtype", "vectors")
Embedding = Tuple[str, int, List[str], np.ndarray]


def vector_columns(rows: List[Tuple[List[str], np.ndarray]], dtype: str) -> Dict[str, Any]:
    """The pyarrow arrays of `VECTOR_COLUMNS` for (tokens, layers) per row."""
    import pyarrow as pa

    arrays = [np.ascontiguousarray(layers, dtype=np.dtype(dtype).newbyteorder("<")) for _, layers in rows]
    return {
        "tokens": pa.array([tokens for tokens, _ in rows], type=pa.list_(pa.string())),
        "shape": pa.array([list(a.shape) for a in arrays], type=pa.list_(pa.int32())),
        "dtype": pa.array([dtype] * len(rows), type=pa.string()).dictionary_encode(),
        "vectors": pa.array([a.tobytes() for a in arrays], type=pa.binary()),
    }


def to_array(shape: List[int], dtype: str, vectors: bytes) -> np.ndarray:
    """A row's layers from its `shape`, `dtype` and `vectors`."""
    return np.frombuffer(vectors, dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape)


def read_embeddings(path: Union[str, Path], filesystem: Optional[Any] = None) -> Iterator[Embedding]:
    """Iterate `(source, line, tokens, array)` over the Parquet files under `path`, in the order
    they are stored (sort by source and line where order matters); needs pyarrow, not Ray.

    array (np.ndarray): (n_layers or 1, n_tokens, width); a row with a problem has 0 tokens.
    """
    import pyarrow.dataset as pads

    dataset = pads.dataset(str(path), format="parquet", filesystem=filesystem)
    columns = ["source", "line", *VECTOR_COLUMNS]
    for batch in dataset.to_batches(columns=columns):
        for row in batch.to_pylist():
            yield row["source"], row["line"], row["tokens"], to_array(row["shape"], row["dtype"], row["vectors"])


def summarize(path: Union[str, Path], filesystem: Optional[Any] = None) -> Dict[str, Any]:
    """Rows, tokens and the rows with a problem (source, line, problem) of an output folder."""
    import pyarrow.compute as pc
    import pyarrow.dataset as pads

    table = pads.dataset(str(path), format="parquet", filesystem=filesystem).to_table(columns=["source", "line", "problem", "tokens"])
    problems = table.filter(table["problem"].is_valid())
    return {
        "rows": table.num_rows,
        "tokens": pc.sum(pc.list_value_length(table["tokens"])).as_py() or 0,
        "problems": sorted(zip(*(problems[name].to_pylist() for name in ("source", "line", "problem")))),
    }
