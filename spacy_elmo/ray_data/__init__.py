"""ELMo features and ELMo pipelines over large corpora on Ray Data (the `ray` extra).

`embed_dataset` and `pipe_dataset` add their outputs to the rows of a Ray Dataset, in pools of
actors that each load the model once; `embed_files` is `embed --engine ray`; `read_embeddings`
reads its Parquet output back with pyarrow alone. Only this package imports Ray, and nothing in
the package imports it but the CLI's Ray engine.
"""
from typing import Any

__all__ = ["EmbedSettings", "embed_dataset", "embed_files", "pipe_dataset", "read_embeddings"]
_HOMES = {"EmbedSettings": "embed", "embed_dataset": "embed", "embed_files": "run", "pipe_dataset": "pipe", "read_embeddings": "output"}


def __getattr__(name: str) -> Any:
    """Import on first use, so that `read_embeddings` needs no Ray."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_HOMES[name]}", __name__), name)
