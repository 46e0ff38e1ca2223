"""`embed_dataset`: the biLM layers of each row of a Ray Dataset, computed in an actor pool."""
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Union

import numpy as np
import pyarrow as pa
import ray

from ..errors import SpacyElmoError
from ..layers.elmo_model import ElmoModelSettings
from ..mixing import mix_layers
from ..pipeline.layer_selection import LayerSpec, check_layer_spec, layer_coefficients
from .output import STORAGE_DTYPES, vector_columns
from ..runtime import set_threads
from .resources import actor_options, threads_for

DEFAULTS = ElmoModelSettings()
ALL_LAYERS = "all"


@dataclass(frozen=True)
class EmbedSettings:
    """What each worker does with its rows: the biLM, the tokenizer and the layers kept."""

    model: ElmoModelSettings
    text_column: str = "text"
    tokenize: str = "spacy"
    lang: Optional[str] = None
    sentences: bool = False
    layers: Union[LayerSpec, str] = ALL_LAYERS
    mix_weights: Optional[Sequence[float]] = None
    mix_gamma: float = 1.0
    dtype: str = "float32"

    def __post_init__(self) -> None:
        if self.dtype not in STORAGE_DTYPES:
            raise SpacyElmoError(f"unknown storage dtype {self.dtype!r}; use one of {', '.join(STORAGE_DTYPES)}")
        if self.layers != ALL_LAYERS:
            check_layer_spec(self.layers, self.mix_weights, self.mix_gamma)


class EmbedRows:
    """An actor's biLM, loaded once, and the layers it adds to each batch of rows."""

    def __init__(self, settings: EmbedSettings, threads: int) -> None:
        from ..line_embedder import LineEmbedder

        set_threads(threads)
        self.settings = settings
        self.embedder = LineEmbedder(settings.model, settings.tokenize, settings.lang, settings.sentences)
        n_layers = self.embedder.n_layers
        self.coefficients = (
            None if settings.layers == ALL_LAYERS else layer_coefficients(settings.layers, n_layers, settings.mix_weights, settings.mix_gamma)
        )
        self.empty = np.zeros((n_layers if self.coefficients is None else 1, 0, self.embedder.width), dtype=np.float32)

    def __call__(self, batch: pa.Table) -> pa.Table:
        """A pyarrow table of rows with their tokens and layers added (see `output.py`)."""
        texts = batch[self.settings.text_column].to_pylist()
        given = batch["problem"].to_pylist() if "problem" in batch.column_names else [None] * len(texts)
        problems = [given_problem or _problem(text) for text, given_problem in zip(texts, given)]
        good = [i for i, problem in enumerate(problems) if problem is None]
        rows: List[Any] = [([], self.empty)] * len(texts)
        for i, (tokens, layers) in zip(good, self.embedder([texts[i] for i in good])):
            rows[i] = (tokens, layers if self.coefficients is None else mix_layers(self.coefficients, layers)[None])
        added = {"problem": pa.array(problems, type=pa.string()), **vector_columns(rows, self.settings.dtype)}
        kept = {name: batch[name] for name in batch.column_names if name not in added}
        return pa.table({**kept, **added})


def embed_dataset(
    ds: "ray.data.Dataset",
    *,
    model: Optional[str] = None,
    options: Optional[str] = None,
    text_column: str = "text",
    tokenize: str = "spacy",
    lang: Optional[str] = None,
    sentences: bool = False,
    layers: Union[LayerSpec, str] = ALL_LAYERS,
    mix_weights: Optional[Sequence[float]] = None,
    mix_gamma: float = 1.0,
    dtype: str = "float32",
    model_dtype: str = DEFAULTS.dtype,
    device: str = DEFAULTS.device,
    batch_size: int = DEFAULTS.batch_size,
    max_tokens: int = DEFAULTS.max_tokens,
    concurrency: int = 1,
    num_cpus: float = 1,
    num_gpus: float = 0,
) -> "ray.data.Dataset":
    """Add each row's tokens and biLM layers, computed by `concurrency` actors.

    Each actor loads the biLM once (`model`: a bundled name, a native folder, a weights .hdf5
    with `options`, or a published name, fetched into the worker's cache), uses `num_cpus`
    torch threads, and embeds `batch_size` rows at a time with the single-process code, so a
    row's vectors are the ones `embed` gives it. A row whose text is missing, not a string or
    empty gets no tokens and says why in `problem`.

    lang (Optional[str]): spaCy tokenizer language (default: the model's, else "en").
    layers: "all" (n_layers, n_tokens, width), or one layer or a fixed mix (1, n_tokens, width):
        an index, "top", "average" or "mix" (`mix_weights`, `mix_gamma`).
    dtype (str): storage of the vectors, "float32" or "float16".
    model_dtype (str): the biLM's computation, "float32", "bfloat16" or "int8" (CPU only).
    device (str): as the model block's; "auto" means CUDA when `num_gpus` > 0.
    RETURNS (ray.data.Dataset): the rows with "problem", "tokens", "shape", "dtype", "vectors".
    """
    if device == "auto" and num_gpus > 0:
        device = "cuda"
    model_settings = ElmoModelSettings(
        bilm=model, options=options, batch_size=batch_size, max_tokens=max_tokens, device=device, dtype=model_dtype
    )
    settings = EmbedSettings(model_settings, text_column, tokenize, lang, sentences, layers, mix_weights, mix_gamma, dtype)
    return ds.map_batches(
        EmbedRows,
        fn_constructor_args=(settings, threads_for(num_cpus)),
        batch_size=batch_size,
        batch_format="pyarrow",
        zero_copy_batch=True,
        **actor_options(concurrency, num_cpus, num_gpus),
    )


def _problem(text: Any) -> Optional[str]:
    if not isinstance(text, str):
        return "not a string"
    return "empty" if not text.strip() else None
