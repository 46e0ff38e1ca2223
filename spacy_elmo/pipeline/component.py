"""The `elmo` pipeline component: runs the biLM and sets `doc._.elmo`, `span._.elmo`, `token._.elmo`."""
import re
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Union

import numpy as np
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer

from ..layers.bilm_model import build_bilm_model, get_bilm, set_bilm
from ..layers.listener import ElmoListener
from .extensions import install_extensions
from .feature_cache import FeatureCache
from .fork_safety import single_thread_torch_in_forked_children
from .layer_selection import LayerSpec, check_layer_spec, layer_coefficients, select
from .segments import Segment, assemble, check_context, disassemble, plan_segments
from .vector_hooks import set_vector_hooks

DTYPES = ("float32", "bfloat16")
STORES = ("all", "selected")
DEVICE_PATTERN = re.compile(r"auto|cpu|cuda(:\d+)?|mps")

DEFAULT_CONFIG: Dict[str, Any] = {
    "model": None,
    "options": None,
    "layer": "average",
    "mix_weights": None,
    "mix_gamma": 1.0,
    "context": "auto",
    "window": 128,
    "stride": 96,
    "batch_size": 64,
    "max_tokens": 4096,
    "device": "auto",
    "dtype": "float32",
    "store": "all",
    "set_vectors": False,
    "frozen": True,
    "feature_cache_mb": 1024,
}


@Language.factory("elmo", assigns=["doc._.elmo", "token._.elmo", "span._.elmo"], default_config=DEFAULT_CONFIG)
def make_elmo(
    nlp: Language,
    name: str,
    model: Optional[str],
    options: Optional[str],
    layer: Union[int, str],
    mix_weights: Optional[List[float]],
    mix_gamma: float,
    context: str,
    window: int,
    stride: int,
    batch_size: int,
    max_tokens: int,
    device: str,
    dtype: str,
    store: str,
    set_vectors: bool,
    frozen: bool,
    feature_cache_mb: int,
) -> "Elmo":
    """Create an `elmo` component.

    model (Optional[str]): the biLM, as `load_bilm` takes it: None for the bundled default,
        a bundled model's short name, a native model folder, or an original weights .hdf5.
        Read at `initialize` (or first use); a saved pipeline carries the weights.
    options (Optional[str]): the options.json of an original weights .hdf5.
    layer (Union[int, str]): what `token._.elmo` gives: a layer index (0 = token layer),
        "top", "average" (equal weights) or "mix" (`mix_weights` and `mix_gamma`).
    mix_weights (Optional[List[float]]): pre-softmax layer weights for "mix"; None = equal.
    mix_gamma (float): the scale γ for "mix".
    context (str): "auto" (sentences where boundaries are set, else the whole doc),
        "sentences", or "doc". Sequences longer than `window` are cut into windows.
    window (int): most tokens per biLM input.
    stride (int): step between overlapping windows (<= window).
    batch_size (int): most sequences per biLM forward pass.
    max_tokens (int): most padded token slots per forward pass, bounding memory.
    device (str): "auto" (follow spaCy's GPU setting), "cpu", "cuda", "cuda:N" or "mps".
    dtype (str): "float32" or "bfloat16" for the biLM's weights; outputs are float32.
    store (str): "all" layers in `doc._.elmo`, or only the "selected" representation.
    set_vectors (bool): also set `doc.tensor` and make `.vector`/`.similarity()` use ELMo.
    frozen (bool): keep the biLM's weights fixed in training (feature-based, as in the paper).
    feature_cache_mb (int): memory for caching a frozen biLM's training outputs; 0 disables.
    """
    return Elmo(
        nlp.vocab,
        build_bilm_model(batch_size, max_tokens),
        name,
        source=model,
        options=options,
        layer=layer,
        mix_weights=mix_weights,
        mix_gamma=mix_gamma,
        context=context,
        window=window,
        stride=stride,
        device=device,
        dtype=dtype,
        store=store,
        set_vectors=set_vectors,
        frozen=frozen,
        feature_cache_mb=feature_cache_mb,
    )


class Elmo(TrainablePipe):
    """Runs an ELMo biLM over docs and shares its layers with downstream listeners.

    The outputs are stateless: a token's vectors depend on its sentence (or window) only.
    Edge cases: whitespace tokens get zero vectors and are not shown to the biLM (so they do
    not change their neighbours); an empty or whitespace-only doc gets (n_layers, 0 or
    n_tokens, width) arrays of zeros; a one-token doc is read as a one-token sentence.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "elmo",
        *,
        source: Optional[str] = None,
        options: Optional[str] = None,
        layer: LayerSpec = "average",
        mix_weights: Optional[List[float]] = None,
        mix_gamma: float = 1.0,
        context: str = "auto",
        window: int = 128,
        stride: int = 96,
        device: str = "auto",
        dtype: str = "float32",
        store: str = "all",
        set_vectors: bool = False,
        frozen: bool = True,
        feature_cache_mb: int = 1024,
    ) -> None:
        check_layer_spec(layer, mix_weights, mix_gamma)
        check_context(context, window, stride)
        if dtype not in DTYPES:
            raise ValueError(f"elmo: unknown 'dtype' {dtype!r}; use one of {DTYPES}")
        if store not in STORES:
            raise ValueError(f"elmo: unknown 'store' {store!r}; use one of {STORES}")
        if not DEVICE_PATTERN.fullmatch(device):
            raise ValueError(f"elmo: unknown 'device' {device!r}; use auto, cpu, cuda, cuda:N or mps")
        for key in ("batch_size", "max_tokens"):
            if model.attrs[key] < 1:
                raise ValueError(f"elmo: '{key}' must be at least 1, got {model.attrs[key]}")
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg: Dict[str, Any] = {
            "source": source,
            "options": options,
            "layer": layer,
            "mix_weights": mix_weights,
            "mix_gamma": mix_gamma,
            "context": context,
            "window": window,
            "stride": stride,
            "device": device,
            "dtype": dtype,
            "store": store,
            "set_vectors": set_vectors,
            "frozen": frozen,
            "batch_size": model.attrs["batch_size"],
            "max_tokens": model.attrs["max_tokens"],
        }
        self.listener_map: Dict[str, List[ElmoListener]] = {}
        self.feature_cache = FeatureCache(feature_cache_mb * 2**20)
        self.layer_coefficients: Optional[np.ndarray] = None
        install_extensions()

    # --- weights ---------------------------------------------------------------------------

    @property
    def bilm(self) -> Any:
        """The biLM (a torch module), or None before weights are loaded."""
        return get_bilm(self.model)

    def initialize(self, get_examples: Optional[Callable[[], Iterable[Example]]] = None, *, nlp: Optional[Language] = None) -> None:
        """Load the biLM's weights from the configured `model` (and `options`)."""
        self.load_weights()

    def load_weights(self) -> None:
        """Load the biLM from the configured source, with a clear error if that fails."""
        from ..bilm import load_bilm

        source, options = self.cfg["source"], self.cfg["options"]
        try:
            bilm = load_bilm(source, options=options, device="cpu", dtype="float32")
        except ValueError as err:
            raise type(err)(f"elmo component '{self.name}': {err}") from err
        except OSError as err:
            raise ValueError(f"elmo component '{self.name}': cannot read the biLM at {source!r}: {err}") from err
        self._attach(bilm)

    def _ensure_loaded(self) -> None:
        if self.bilm is None:
            self.load_weights()

    def _attach(self, bilm: Any) -> None:
        """Finish setting up a loaded biLM: device, dtype, freezing, layer checks, listeners."""
        import torch

        coefficients = layer_coefficients(self.cfg["layer"], bilm.n_layers, self.cfg["mix_weights"], self.cfg["mix_gamma"])
        bilm = bilm.to(device=_torch_device(self.cfg["device"]), dtype=getattr(torch, self.cfg["dtype"]))
        bilm.requires_grad_(not self.cfg["frozen"])
        bilm.eval()
        single_thread_torch_in_forked_children()
        set_bilm(self.model, bilm)
        self.model.attrs.update(batch_size=self.cfg["batch_size"], max_tokens=self.cfg["max_tokens"])  # not the saved ones
        self.layer_coefficients = coefficients
        self.feature_cache.clear()
        for listener in self.listeners:
            self._set_listener_dims(listener)

    # --- prediction ------------------------------------------------------------------------

    def __call__(self, doc: Doc) -> Doc:
        install_extensions()
        return super().__call__(doc)

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        install_extensions()
        return super().pipe(stream, batch_size=batch_size)

    def predict(self, docs: Iterable[Doc]) -> List[np.ndarray]:
        """All biLM layers per doc, float32 (n_layers, len(doc), width)."""
        self._ensure_loaded()
        docs = list(docs)
        segments = self._segments(docs)
        outputs = self.model.predict([list(s.words) for s in segments]) if segments else []
        return self._assemble(docs, segments, outputs)

    def set_annotations(self, docs: Sequence[Doc], layers: Sequence[np.ndarray]) -> None:
        """Set `doc._.elmo` (and, with `set_vectors`, `doc.tensor` and the vector hooks)."""
        coefficients = self.layer_coefficients
        store_all, set_vectors = self.cfg["store"] == "all", self.cfg["set_vectors"]
        for doc, doc_layers in zip(docs, layers):
            # A copy, so that a stored selection does not keep all layers alive.
            selected = np.array(select(doc_layers, coefficients)) if set_vectors or not store_all else None
            doc._.elmo = doc_layers if store_all else selected
            doc._.elmo_layer_mix = coefficients.tolist() if store_all else None
            if set_vectors:
                set_vector_hooks(doc, selected)

    # --- training --------------------------------------------------------------------------

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Run the biLM on a batch and hand the layers to the listeners.

        Frozen: outputs come from the feature cache when possible, and no gradient flows.
        Otherwise the listeners' gradients fine-tune the biLM.
        """
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        if not self.listeners:
            return losses
        self._ensure_loaded()
        docs = [eg.predicted for eg in examples]
        segments = self._segments(docs)
        if self.cfg["frozen"]:
            layers = self._assemble(docs, segments, self._cached_outputs(segments))
            accumulate_gradient = backprop = _no_backprop
        else:
            outputs, bp_outputs = self.model.begin_update([list(s.words) for s in segments])
            layers = self._assemble(docs, segments, outputs)
            d_layers = [np.zeros_like(x) for x in layers]

            def accumulate_gradient(one_d_layers: List[np.ndarray]) -> List:
                for i, d in enumerate(one_d_layers):
                    d = self.model.ops.to_numpy(d)
                    d_layers[i] += d
                    losses[self.name] += float((d**2).sum())  # type: ignore[index]
                return []

            def backprop(one_d_layers: List[np.ndarray]) -> List:
                accumulate_gradient(one_d_layers)
                bp_outputs(disassemble(segments, d_layers))
                if sgd is not None:
                    self.finish_update(sgd)
                return []

        batch_id = ElmoListener.get_batch_id(docs)
        for listener in self.listeners[:-1]:
            listener.receive(batch_id, layers, accumulate_gradient)
        self.listeners[-1].receive(batch_id, layers, backprop)
        return losses

    def finish_update(self, sgd: Optimizer) -> None:
        """Update the biLM's weights, unless frozen."""
        if not self.cfg["frozen"]:
            self.model.finish_update(sgd)

    def get_loss(self, examples: Iterable[Example], scores: Any) -> None:
        """The component has no loss of its own: gradients come from listeners."""

    def add_label(self, label: str) -> int:
        raise NotImplementedError("the elmo component has no labels")

    # --- listeners -------------------------------------------------------------------------

    @property
    def listeners(self) -> List[ElmoListener]:
        """The listener layers of downstream components."""
        return [m for c in self.listening_components for m in self.listener_map[c]]

    @property
    def listening_components(self) -> List[str]:
        """The names of downstream components that listen to this one."""
        return list(self.listener_map.keys())

    def add_listener(self, listener: ElmoListener, component_name: str) -> None:
        """Add a downstream listener (internals)."""
        if self.cfg["store"] != "all":
            raise ValueError(
                f"elmo component '{self.name}' has store = \"selected\", but '{component_name}' listens to it "
                "and needs all layers for its own mix: set store = \"all\""
            )
        self.listener_map.setdefault(component_name, [])
        if listener not in self.listener_map[component_name]:
            self.listener_map[component_name].append(listener)
        if self.bilm is not None:
            self._set_listener_dims(listener)

    def remove_listener(self, listener: ElmoListener, component_name: str) -> bool:
        """Remove a downstream listener (internals)."""
        if listener in self.listener_map.get(component_name, []):
            self.listener_map[component_name].remove(listener)
            if not self.listener_map[component_name]:
                del self.listener_map[component_name]
            return True
        return False

    def find_listeners(self, component: Any) -> None:
        """Register the ELMo listeners in a downstream component's model (internals)."""
        names = ("*", self.name)
        if isinstance(getattr(component, "model", None), Model):
            for node in component.model.walk():
                if isinstance(node, ElmoListener) and node.upstream_name in names:
                    self.add_listener(node, component.name)

    def _set_listener_dims(self, listener: ElmoListener) -> None:
        for dim, value in (("nO", self.bilm.output_dim), ("n_layers", self.bilm.n_layers)):
            known = listener.maybe_get_dim(dim)
            if known is not None and known != value:
                raise ValueError(
                    f"elmo component '{self.name}': a listening component was built for a biLM with "
                    f"{dim} = {known}, but this biLM has {value}"
                )
            listener.set_dim(dim, value)

    # --- serialization ---------------------------------------------------------------------
    # The settings live in the pipeline's config (so overrides at `spacy.load` apply); only the
    # vocab and the model (the biLM's weights, as safetensors) are saved.

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        return super().to_bytes(exclude=[*exclude, "cfg"])

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "Elmo":
        super().from_bytes(bytes_data, exclude=[*exclude, "cfg"])
        self._attach_deserialized()
        return self

    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        super().to_disk(path, exclude=[*exclude, "cfg"])

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "Elmo":
        super().from_disk(path, exclude=[*exclude, "cfg"])
        self._attach_deserialized()
        return self

    def _attach_deserialized(self) -> None:
        if self.bilm is not None:
            self._attach(self.bilm)

    # --- internals -------------------------------------------------------------------------

    def _segments(self, docs: Sequence[Doc]) -> List[Segment]:
        return plan_segments(docs, self.cfg["context"], self.cfg["window"], self.cfg["stride"])

    def _assemble(self, docs: Sequence[Doc], segments: List[Segment], outputs: Sequence[np.ndarray]) -> List[np.ndarray]:
        return assemble(docs, segments, outputs, self.bilm.n_layers, self.bilm.output_dim)

    def _cached_outputs(self, segments: List[Segment]) -> List[np.ndarray]:
        outputs: List[Optional[np.ndarray]] = [self.feature_cache.get(s.words) for s in segments]
        missing = [i for i, output in enumerate(outputs) if output is None]
        if missing:
            computed = self.model.predict([list(segments[i].words) for i in missing])
            for i, output in zip(missing, computed):
                outputs[i] = output
                self.feature_cache.put(segments[i].words, output)
        return outputs  # type: ignore[return-value]


def _torch_device(device: str) -> Any:
    import torch
    from thinc.api import get_torch_default_device

    if device == "auto":
        return get_torch_default_device()
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"elmo: device {device!r} was asked for, but torch sees no CUDA GPU")
    return torch.device(device)


def _no_backprop(_: Any) -> List:
    return []
