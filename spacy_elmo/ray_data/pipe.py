"""`pipe_dataset`: a saved spaCy pipeline over the rows of a Ray Dataset, keeping what users keep."""
from typing import Any, Dict, List, Sequence

import pyarrow as pa
import ray

from ..errors import SpacyElmoError
from ..runtime import set_threads
from .resources import actor_options, threads_for

# Optional per-row annotations beyond the entities, each a list over the doc's tokens or sentences.
ANNOTATIONS = ("tokens", "tags", "pos", "lemmas", "sentences")
_SPAN = pa.struct([("start", pa.int32()), ("end", pa.int32())])
_ENTITY = pa.struct([("start", pa.int32()), ("end", pa.int32()), ("label", pa.string()), ("text", pa.string())])
_STRINGS = pa.list_(pa.string())
TYPES = {"entities": pa.list_(_ENTITY), "tokens": _STRINGS, "tags": _STRINGS, "pos": _STRINGS, "lemmas": _STRINGS,
         "sentences": pa.list_(_SPAN), "vector": pa.list_(pa.float32())}  # fmt: skip


class PipeRows:
    """An actor's pipeline, loaded once, and the annotations it adds to each batch of rows."""

    def __init__(self, pipeline: str, text_column: str, annotations: Sequence[str], vector: bool, threads: int) -> None:
        import spacy

        set_threads(threads)
        try:
            self.nlp = spacy.load(pipeline)
        except OSError as err:
            raise SpacyElmoError(f"cannot load the spaCy pipeline {pipeline!r} on this worker: {err}") from None
        self.text_column = text_column
        self.annotations = tuple(annotations)
        self.vector = vector

    def __call__(self, batch: pa.Table) -> pa.Table:
        """The rows with "entities" and the chosen annotations added."""
        texts = batch[self.text_column].to_pylist()
        good = [i for i, text in enumerate(texts) if isinstance(text, str)]
        rows: List[Dict[str, Any]] = [_empty(self.annotations, self.vector) for _ in texts]
        for i, doc in zip(good, self.nlp.pipe(texts[i] for i in good)):
            rows[i] = _annotations(doc, self.annotations, self.vector)
        added = {name: pa.array([row[name] for row in rows], type=TYPES[name]) for name in rows[0]} if rows else {}
        kept = {name: batch[name] for name in batch.column_names if name not in added}
        return pa.table({**kept, **added})


def pipe_dataset(
    ds: "ray.data.Dataset",
    pipeline: str,
    *,
    text_column: str = "text",
    annotations: Sequence[str] = (),
    vector: bool = False,
    batch_size: int = 64,
    concurrency: int = 1,
    num_cpus: float = 1,
    num_gpus: float = 0,
) -> "ray.data.Dataset":
    """Run the saved pipeline at `pipeline` (a path every worker can read, or an installed
    package's name) over the `text_column` of each row, in `concurrency` actors.

    Adds "entities": a list of {start, end, label, text} (character offsets into the text);
    `annotations` adds any of "tokens", "tags", "pos", "lemmas" (per token) and "sentences"
    ({start, end} character offsets); `vector` adds "vector", the doc's pooled ELMo vector
    (`doc[:]._.elmo`: the elmo component's layer or mix, averaged over the tokens).
    A row whose text is not a string gets empty lists and a null vector.
    """
    unknown = sorted(set(annotations) - set(ANNOTATIONS))
    if unknown:
        raise SpacyElmoError(f"unknown annotations {unknown}; choose from {', '.join(ANNOTATIONS)}")
    return ds.map_batches(
        PipeRows,
        fn_constructor_args=(str(pipeline), text_column, tuple(annotations), vector, threads_for(num_cpus)),
        batch_size=batch_size,
        batch_format="pyarrow",
        **actor_options(concurrency, num_cpus, num_gpus),
    )


def _annotations(doc: Any, annotations: Sequence[str], vector: bool) -> Dict[str, Any]:
    row: Dict[str, Any] = {
        "entities": [{"start": e.start_char, "end": e.end_char, "label": e.label_, "text": e.text} for e in doc.ents]
    }
    values = {
        "tokens": lambda: [t.text for t in doc],
        "tags": lambda: [t.tag_ for t in doc],
        "pos": lambda: [t.pos_ for t in doc],
        "lemmas": lambda: [t.lemma_ for t in doc],
        "sentences": lambda: [{"start": s.start_char, "end": s.end_char} for s in doc.sents],
    }
    for name in annotations:
        row[name] = values[name]()
    if vector:
        row["vector"] = [float(x) for x in doc[:]._.elmo] if len(doc) else None
    return row


def _empty(annotations: Sequence[str], vector: bool) -> Dict[str, Any]:
    return {"entities": [], **{name: [] for name in annotations}, **({"vector": None} if vector else {})}
