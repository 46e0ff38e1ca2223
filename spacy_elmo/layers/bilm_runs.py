"""What the model block does the same on either runtime: read the configured biLM, hold it (and
load it once when threads race to it), run a batch of docs through it segment by segment in
length-sorted batches, and record its sizes."""
import threading
from typing import TYPE_CHECKING, Any, Callable, List, Sequence, Tuple

from spacy.tokens import Doc
from thinc.api import Model

from ..batching import length_batches
from ..errors import SpacyElmoError
from .segments import Segment, plan_segments

if TYPE_CHECKING:
    from .model_settings import ElmoModelSettings

# Held while weights are loaded, so that threads using a model for the first time load it once.
LOADING = threading.RLock()
# A biLM's forward over one batch of token sequences: per sequence its layers (n_layers, n_tokens, width).
EmbedBatch = Callable[[List[Tuple[str, ...]]], Sequence[Any]]


def get_bilm(model: Model) -> Any:
    """The biLM of an ELMo model (a torch module, or an `OnnxBiLM` on runtime "onnxruntime"),
    or None before its weights are loaded."""
    return model.shims[0]._model


def ensure_loaded(model: Model) -> Any:
    """The biLM of an ELMo model, loading its weights first if that has not happened (once,
    when several threads use the model at the same time)."""
    if get_bilm(model) is None:
        with LOADING:
            if get_bilm(model) is None:
                model.initialize()
    return get_bilm(model)


def run_segments(docs: Sequence[Doc], settings: "ElmoModelSettings", embed_batch: EmbedBatch) -> Tuple[List[Segment], List[Any]]:
    """Cut docs into the biLM's inputs (`segments.py`) and run them in batches bounded by the
    settings' `batch_size` and `max_tokens`.

    RETURNS (Tuple[List[Segment], List[Any]]): the segments and, in their order, their outputs.
    """
    segments = plan_segments(docs, settings.context, settings.window, settings.stride)
    sequences = [segment.words for segment in segments]
    outputs: List[Any] = [None] * len(sequences)
    for batch in length_batches([len(s) for s in sequences], settings.batch_size, settings.max_tokens):
        for index, output in zip(batch, embed_batch([sequences[i] for i in batch])):
            outputs[index] = output
    return segments, outputs


def read_bilm(model: Model) -> Any:
    """The biLM the model's settings name, as a float32 torch module on the CPU (without its
    softmax unless `keep_softmax`), and what its folder says about it in
    `model.attrs["bilm_info"]` (name, lang, license, corpus, url where known)."""
    from ..bilm import load_bilm
    from ..bilm.model_info import read_model_info

    settings: "ElmoModelSettings" = model.attrs["settings"]
    try:
        bilm = load_bilm(settings.bilm, options=settings.options, device="cpu")
    except SpacyElmoError as err:
        raise type(err)(f"elmo model: {err}") from err
    except OSError as err:
        raise SpacyElmoError(f"elmo model: cannot read the biLM at {settings.bilm!r}: {err}") from err
    if not settings.keep_softmax:
        bilm.drop_softmax()
    info = read_model_info(settings.bilm)
    model.attrs["bilm_info"] = {key: info[key] for key in ("name", "lang", "license", "corpus", "url") if key in info}
    return bilm


def set_sizes(model: Model, bilm: Any) -> None:
    """Set the model's dims from its loaded biLM: `nO` (layer width) and `n_layers`."""
    model.set_dim("nO", bilm.output_dim)
    model.set_dim("n_layers", bilm.n_layers)
