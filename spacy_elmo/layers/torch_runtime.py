"""The model block on runtime "torch": the biLM as a torch module in a `PyTorchShim`, so that a
fine-tuned biLM is updated by the pipeline's optimizer; saved as safetensors bytes (never
pickle), or, for a bundled biLM, as its name and hash (`bundled_reference.py`)."""
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple

from spacy.tokens import Doc
from thinc.api import Model, PyTorchShim, torch2xp, xp2torch
from thinc.types import Floats3d

from ..dependencies import require
from ..errors import ConfigError, SpacyElmoError
from .bilm_runs import ensure_loaded, read_bilm, run_segments, set_sizes
from .bundled_reference import bundled_folder, is_reference, mark, reference_bytes, resolve_reference
from .no_backprop import no_backprop
from .onnx_runtime import is_onnx_state
from .segments import assemble

if TYPE_CHECKING:
    from .model_settings import ElmoModelSettings


def build_torch_model(settings: "ElmoModelSettings") -> Model[List[Doc], List[Floats3d]]:
    """The model with an empty `PyTorchShim`; the biLM is read at initialize."""
    require("torch", 'elmo model: runtime "torch"')
    shim = PyTorchShim(None, serialize_model=_serialize, deserialize_model=partial(_deserialize, settings=settings))
    return Model(
        "elmo_model", forward, init=init, shims=[shim], dims={"nO": None, "n_layers": None}, attrs={"settings": settings}
    )


def init(model: Model, X: Optional[List[Doc]] = None, Y: Optional[Any] = None) -> None:
    """Load the biLM's weights from the configured `bilm` (and `options`) onto the configured
    device, in the configured compute dtype."""
    settings: "ElmoModelSettings" = model.attrs["settings"]
    placed = _place(read_bilm(model), settings, None)
    folder = bundled_folder(settings.bilm)
    if folder is not None and not settings.keep_softmax:
        mark(placed, folder)
    model.shims[0]._model = placed
    set_sizes(model, placed)


def forward(model: Model[List[Doc], List[Floats3d]], docs: List[Doc], is_train: bool) -> Tuple[List[Floats3d], Callable]:
    """All layers per doc, float32 (n_layers, len(doc), width) on the model's device.

    In training, and when the biLM's weights require gradients, the backprop callback takes the
    gradients of the outputs into the biLM's weights.
    """
    import torch

    bilm = ensure_loaded(model)
    tune = is_train and any(p.requires_grad for p in bilm.parameters())
    with torch.enable_grad() if tune else torch.inference_mode():
        bilm.train(tune)
        try:
            segments, outputs = run_segments(docs, model.attrs["settings"], bilm.layer_tensors)
        finally:
            bilm.eval()
        shape, device = (bilm.n_layers, bilm.output_dim), bilm.device
        zeros = lambda n: torch.zeros((shape[0], n, shape[1]), dtype=torch.float32, device=device)
        arrays = assemble(docs, segments, [output.float() for output in outputs], zeros)
    Y = [torch2xp(array.detach() if tune else array, ops=model.ops) for array in arrays]
    if not tune:
        return Y, no_backprop

    def backprop(dY: List[Floats3d]) -> List:
        pairs = [(a, xp2torch(model.ops.asarray3f(d), device=a.device)) for a, d in zip(arrays, dY) if a.requires_grad]
        if pairs:
            torch.autograd.backward([a for a, _ in pairs], [d for _, d in pairs])
        return []

    return Y, backprop


def set_trainable(bilm: Any, trainable: bool) -> None:
    """Let the biLM's weights take gradients, or not; an int8 biLM has none to take."""
    from ..bilm.quantization import is_int8

    if trainable and is_int8(bilm):
        raise ConfigError(
            "frozen = false fine-tunes the biLM, but an int8 biLM has no gradients; set the model's compute_dtype "
            "to float32 (or bfloat16), or keep frozen = true"
        )
    bilm.requires_grad_(trainable)


def _place(bilm: Any, settings: "ElmoModelSettings", device: Optional[Any]) -> Any:
    """The biLM on the configured device and in the configured compute dtype, in eval mode."""
    from thinc.api import get_torch_default_device

    from ..bilm.quantization import to_compute_dtype
    from ..runtime import torch_device
    from .fork_safety import single_thread_torch_in_forked_children

    single_thread_torch_in_forked_children()
    target = torch_device(settings.device, auto=device or get_torch_default_device())
    try:
        return to_compute_dtype(bilm, target, settings.compute_dtype)
    except ConfigError as err:
        raise ConfigError(f"elmo model: {err}") from None


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


def _deserialize(_: Any, data: bytes, device: Any, *, settings: "ElmoModelSettings") -> Any:
    if not data:
        return None
    if is_onnx_state(data):
        raise SpacyElmoError(
            "elmo model: runtime \"torch\", but the pipeline holds its biLM as an ONNX graph (saved with runtime "
            "\"onnxruntime\"); load it with runtime \"onnxruntime\", as its config says"
        )
    from ..bilm import bilm_from_bytes, load_bilm

    if is_reference(data):
        folder = resolve_reference(data)
        bilm = load_bilm(folder, device="cpu")
        bilm.drop_softmax()
        placed = _place(bilm, settings, device)
        mark(placed, folder)
        return placed
    return _place(bilm_from_bytes(data), settings, device)
