"""`spacy-elmo.ElmoModel.v1`: docs in, every biLM layer per doc out.

The model owns the way from a Doc to its features: it cuts docs into the sequences the biLM
reads (`segments.py`), runs the biLM on them in length-sorted batches bounded by `batch_size`
and `max_tokens`, and puts the outputs back per doc. The weights are read when the model is
initialized (or first used) from `bilm` (+ `options`); from then on they travel with the model.
The torch module lives in a `PyTorchShim`, so a fine-tuned biLM is updated by the pipeline's
optimizer, and it is serialized as safetensors bytes, never pickle.
"""
import threading
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any, Callable, Dict, List, Optional, Tuple

from spacy.tokens import Doc
from thinc.api import Model, PyTorchShim, torch2xp, xp2torch
from thinc.types import Floats3d

from ..errors import ConfigError, SpacyElmoError
from ..registry_names import ELMO_MODEL
from ..runtime import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS, check_compute_dtype, check_device
from .bundled_reference import bundled_folder, is_reference, mark, reference_bytes, resolve_reference
from .no_backprop import no_backprop
from .segments import assemble, check_context, plan_segments

# Held while weights are loaded, so that threads using a model for the first time load it once.
LOADING = threading.RLock()


@dataclass(frozen=True)
class ElmoModelSettings:
    """The settings of an ELMo model block, validated when created.

    bilm (Optional[str]): None for the bundled default, a bundled model's short name, a native
        model folder, or an original weights .hdf5 (with `options`).
    options (Optional[str]): the options.json of an original weights .hdf5.
    context (str): "auto" (sentences where boundaries are set, else the whole doc),
        "sentences", or "doc". Sequences longer than `window` are cut into windows.
    window (int): most tokens per biLM input.
    stride (int): step between overlapping windows (<= window).
    batch_size (int): most sequences per biLM forward pass.
    max_tokens (int): most padded token slots per forward pass, bounding memory.
    device (str): "auto" (follow spaCy's GPU setting), "cpu", "cuda", "cuda:N" or "mps".
    dtype (str): the compute dtype: "float32", "bfloat16", or "int8" (CPU only; weights
        quantized per output channel when loaded); outputs are float32.
    keep_softmax (bool): keep the biLM's softmax (for perplexities); features do not need it,
        so by default it is dropped when the weights are read and not saved with a pipeline.
    """

    bilm: Optional[str] = None
    options: Optional[str] = None
    context: str = "auto"
    window: int = 128
    stride: int = 96
    batch_size: int = DEFAULT_BATCH_SIZE
    max_tokens: int = DEFAULT_MAX_TOKENS
    device: str = "auto"
    dtype: str = "float32"
    keep_softmax: bool = False

    def __post_init__(self) -> None:
        for key in ("window", "stride", "batch_size", "max_tokens"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"elmo model: '{key}' must be a whole number, got {value!r}")
        check_context(self.context, self.window, self.stride)
        for key in ("batch_size", "max_tokens"):
            if getattr(self, key) < 1:
                raise ConfigError(f"elmo model: '{key}' must be at least 1, got {getattr(self, key)}")
        try:
            check_device(self.device, "'device'")
            object.__setattr__(self, "dtype", check_compute_dtype(self.dtype, "'dtype'"))
        except ConfigError as err:
            raise ConfigError(f"elmo model: {err}") from None

    def to_config(self) -> Dict[str, Any]:
        """The model block of a config with these settings."""
        return {"@architectures": ELMO_MODEL, **asdict(self)}


def build_elmo_model(settings: ElmoModelSettings) -> Model[List[Doc], List[Floats3d]]:
    """Create the model; the biLM's weights are read at initialize (or first use).

    Dims `nO` (layer width) and `n_layers` are set once the weights are loaded.
    """
    shim = PyTorchShim(None, serialize_model=_serialize, deserialize_model=partial(_deserialize, settings=settings))
    return Model(
        "elmo_model", forward, init=init, shims=[shim], dims={"nO": None, "n_layers": None}, attrs={"settings": settings}
    )


def with_fixed_weights(model: Model[List[Doc], List[Floats3d]]) -> Model[List[Doc], List[Floats3d]]:
    """`model` with its weights fixed: it always predicts, and passes no gradient back."""
    return Model("elmo_frozen", _frozen_forward, layers=[model], dims={"nO": None, "n_layers": None}, init=_frozen_init)


def get_bilm(model: Model) -> Any:
    """The biLM (a torch module) of an ELMo model, or None before its weights are loaded."""
    return model.shims[0]._model


def ensure_loaded(model: Model) -> Any:
    """The biLM of an ELMo model, loading its weights first if that has not happened (once,
    when several threads use the model at the same time)."""
    if get_bilm(model) is None:
        with LOADING:
            if get_bilm(model) is None:
                model.initialize()
    return get_bilm(model)


def init(model: Model, X: Optional[List[Doc]] = None, Y: Optional[Any] = None) -> None:
    """Load the biLM's weights from the configured `bilm` (and `options`), and what its folder
    says about it (`model.attrs["bilm_info"]`: name, lang, license, corpus, url where known)."""
    from ..bilm import load_bilm
    from ..bilm.model_info import read_model_info

    settings: ElmoModelSettings = model.attrs["settings"]
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
    placed = _place(bilm, settings, None)
    folder = bundled_folder(settings.bilm)
    if folder is not None and not settings.keep_softmax:
        mark(placed, folder)
    _set_bilm(model, placed)


def forward(model: Model[List[Doc], List[Floats3d]], docs: List[Doc], is_train: bool) -> Tuple[List[Floats3d], Callable]:
    """All layers per doc, float32 (n_layers, len(doc), width) on the model's device.

    In training, and when the biLM's weights require gradients, the backprop callback takes the
    gradients of the outputs into the biLM's weights.
    """
    import torch

    bilm = ensure_loaded(model)
    settings: ElmoModelSettings = model.attrs["settings"]
    segments = plan_segments(docs, settings.context, settings.window, settings.stride)
    sequences = [segment.words for segment in segments]
    tune = is_train and any(p.requires_grad for p in bilm.parameters())
    outputs: List[Any] = [None] * len(sequences)
    with torch.enable_grad() if tune else torch.inference_mode():
        bilm.train(tune)
        try:
            for batch in _batches(sequences, settings):
                for index, tensor in zip(batch, bilm.layer_tensors([sequences[i] for i in batch])):
                    outputs[index] = tensor
        finally:
            bilm.eval()
        arrays = assemble(docs, segments, outputs, bilm.n_layers, bilm.output_dim)
    Y = [torch2xp(array.detach() if tune else array, ops=model.ops) for array in arrays]
    if not tune:
        return Y, no_backprop

    def backprop(dY: List[Floats3d]) -> List:
        pairs = [(a, xp2torch(model.ops.asarray3f(d), device=a.device)) for a, d in zip(arrays, dY) if a.requires_grad]
        if pairs:
            torch.autograd.backward([a for a, _ in pairs], [d for _, d in pairs])
        return []

    return Y, backprop


def _batches(sequences: List[Tuple[str, ...]], settings: ElmoModelSettings) -> List[List[int]]:
    from ..batching import length_batches

    return length_batches([len(s) for s in sequences], settings.batch_size, settings.max_tokens)


def _place(bilm: Any, settings: ElmoModelSettings, device: Optional[Any]) -> Any:
    """The biLM on the configured device and in the configured dtype, in eval mode."""
    from thinc.api import get_torch_default_device

    from ..bilm.quantization import to_compute_dtype
    from ..runtime import torch_device
    from .fork_safety import single_thread_torch_in_forked_children

    single_thread_torch_in_forked_children()
    target = torch_device(settings.device, auto=device or get_torch_default_device())
    try:
        return to_compute_dtype(bilm, target, settings.dtype)
    except ConfigError as err:
        raise ConfigError(f"elmo model: {err}") from None


def _set_bilm(model: Model, bilm: Any) -> None:
    model.shims[0]._model = bilm
    model.set_dim("nO", bilm.output_dim)
    model.set_dim("n_layers", bilm.n_layers)


def _frozen_init(model: Model, X: Optional[List[Doc]] = None, Y: Optional[Any] = None) -> None:
    inner = model.layers[0]
    inner.initialize(X=X)
    for dim in ("nO", "n_layers"):
        model.set_dim(dim, inner.get_dim(dim))


def _frozen_forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats3d], Callable]:
    return model.layers[0].predict(docs), no_backprop



def _serialize(bilm: Any) -> bytes:
    """A bundled biLM as its name and hash (`bundled_reference.py`); any other as safetensors
    bytes: float16 where that keeps every weight exactly, else float32."""
    if bilm is None:
        return b""
    reference = reference_bytes(bilm)
    if reference is not None:
        return reference
    import torch

    from ..bilm import bilm_to_bytes

    exact = all(torch.equal(p.detach().half().to(p.dtype), p.detach()) for p in bilm.state_dict().values())
    return bilm_to_bytes(bilm, "float16" if exact else None)


def _deserialize(_: Any, data: bytes, device: Any, *, settings: ElmoModelSettings) -> Any:
    if not data:
        return None
    from ..bilm import bilm_from_bytes, load_bilm

    if is_reference(data):
        folder = resolve_reference(data)
        bilm = load_bilm(folder, device="cpu")
        bilm.drop_softmax()
        placed = _place(bilm, settings, device)
        mark(placed, folder)
        return placed
    return _place(bilm_from_bytes(data), settings, device)
