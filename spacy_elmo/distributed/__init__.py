"""ELMo features and ELMo pipelines over large corpora on Ray Data (the `ray` extra).

`embed_dataset` and `pipe_dataset` add their outputs to the rows of a Ray Dataset, in pools of
actors that each load the model once; `read_embeddings` reads `embed --engine ray`'s Parquet
output back with pyarrow alone. Only this package and the CLI import Ray.
"""
from typing import Any

__all__ = ["embed_dataset", "embed_files", "pipe_dataset", "read_embeddings"]
_HOMES = {"embed_dataset": "embed", "embed_files": "run", "pipe_dataset": "pipe", "read_embeddings": "output"}


def __getattr__(name: str) -> Any:
    """Import on first use, so that `read_embeddings` needs no Ray."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_HOMES[name]}", __name__), name)
