"""`embed_dataset`: the biLM layers of each row of a Ray Dataset, computed in an actor pool."""
import dataclasses
from typing import Any, List, Optional

import numpy as np
import pyarrow as pa
import ray

from ..errors import SpacyElmoError
from ..embed.settings import EmbedSettings
from ..runtime import set_threads
from .output import vector_columns
from .resources import actor_options, threads_for


class EmbedRows:
    """An actor's biLM, loaded once, and the layers it adds to each batch of rows.

    A failure to load the model is raised by the first batch, not by the actor's start: Ray
    retries a failed start for ever, printing each failure, while a batch's error ends the run
    with the package's own one-line message.
    """

    def __init__(self, settings: EmbedSettings, text_column: str, threads: int) -> None:
        from ..embed.lines import LineEmbedder

        set_threads(threads)
        self.text_column = text_column
        self.storage_dtype = settings.storage_dtype
        self.error: Optional[SpacyElmoError] = None
        try:
            self.embedder = LineEmbedder(settings)
        except SpacyElmoError as err:
            self.error = err
            return
        self.one_layer = self.embedder.coefficients is not None
        n_layers = 1 if self.one_layer else self.embedder.n_layers
        self.empty = np.zeros((n_layers, 0, self.embedder.width), dtype=np.float32)

    def __call__(self, batch: pa.Table) -> pa.Table:
        """A pyarrow table of rows with their tokens and layers added (see `output.py`)."""
        if self.error is not None:
            raise self.error
        texts = batch[self.text_column].to_pylist()
        given = batch["problem"].to_pylist() if "problem" in batch.column_names else [None] * len(texts)
        problems = [given_problem or _problem(text) for text, given_problem in zip(texts, given)]
        good = [i for i, problem in enumerate(problems) if problem is None]
        rows: List[Any] = [([], self.empty)] * len(texts)
        for i, (tokens, layers) in zip(good, self.embedder([texts[i] for i in good])):
            rows[i] = (tokens, layers[None] if self.one_layer else layers)
        added = {"problem": pa.array(problems, type=pa.string()), **vector_columns(rows, self.storage_dtype)}
        kept = {name: batch[name] for name in batch.column_names if name not in added}
        return pa.table({**kept, **added})


def embed_dataset(
    ds: "ray.data.Dataset",
    settings: Optional[EmbedSettings] = None,
    *,
    text_column: str = "text",
    concurrency: int = 1,
    num_cpus: float = 1,
    num_gpus: float = 0,
) -> "ray.data.Dataset":
    """Add each row's tokens and biLM layers, computed by `concurrency` actors.

    Each actor loads the biLM once (`settings.model.bilm`: a bundled name, a native folder, a
    weights .hdf5 with `options`, or a published name, fetched into the worker's cache), uses
    `num_cpus` torch threads, and embeds `settings.model.batch_size` rows at a time with the
    single-process code, so a row's vectors are the ones `embed` gives it. A row whose text is
    missing, not a string or empty gets no tokens and says why in `problem`.

    settings (Optional[EmbedSettings]): the biLM, tokenizer, layers and storage dtype (default:
        the bundled biLM, all layers, float32); its model's device "auto" means CUDA when
        `num_gpus` > 0.
    text_column (str): the column holding each row's text.
    RETURNS (ray.data.Dataset): the rows with "problem", "tokens", "shape", "dtype", "vectors".
    """
    settings = settings or EmbedSettings()
    if settings.model.device == "auto" and num_gpus > 0:
        settings = dataclasses.replace(settings, model=dataclasses.replace(settings.model, device="cuda"))
    return ds.map_batches(
        EmbedRows,
        fn_constructor_args=(settings, text_column, threads_for(num_cpus)),
        batch_size=settings.model.batch_size,
        batch_format="pyarrow",
        zero_copy_batch=True,
        **actor_options(concurrency, num_cpus, num_gpus),
    )


def _problem(text: Any) -> Optional[str]:
    if not isinstance(text, str):
        return "not a string"
    return "empty" if not text.strip() else None


__all__ = ["EmbedRows", "EmbedSettings", "embed_dataset"]
