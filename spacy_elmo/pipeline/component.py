"""The `elmo` pipeline component: runs its model (`spacy-elmo.ElmoModel.v2`) over docs, sets
`doc._.elmo`, `span._.elmo`, `token._.elmo`, and shares the layers with downstream listeners."""
import warnings
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer
from thinc.types import Floats3d

from ..about import __version__
from ..errors import ConfigError, SpacyElmoError
from ..layer_choice import layer_coefficients
from ..layers.elmo_model import LOADING, ensure_loaded, get_bilm, set_frozen, with_fixed_weights
from ..layers.listener import ElmoListener
from ..layers.no_backprop import no_backprop
from ..mixing import mix_layers
from ..registry_names import ELMO_EMBED, ELMO_FACTORY, ELMO_LISTENER, ELMO_MODEL
from .extensions import install_extensions
from .feature_cache import FeatureCache
from .integrity import ADVICE, verify_checksums, write_checksums
from .requirements import check_requirement
from .settings import ElmoSettings, default_config
from .vector_hooks import set_vector_hooks



@Language.factory(ELMO_FACTORY, assigns=["doc._.elmo", "token._.elmo", "span._.elmo"], default_config=default_config())
def make_elmo(
    nlp: Language,
    name: str,
    model: Union[Model[List[Doc], List[Floats3d]], str],
    layer: Union[int, float, str],
    mix_weights: Optional[List[float]],
    mix_gamma: float,
    store: str,
    set_vectors: bool,
    frozen: bool,
    feature_cache_mb: int,
) -> "Elmo":
    """Create an `elmo` component; see `ElmoSettings` for the settings.

    model (Model[List[Doc], List[Floats3d]]): docs to all biLM layers, e.g.
        `spacy-elmo.ElmoModel.v2`, whose block also names the weights (`bilm`) and the runtime.
    """
    if isinstance(model, str):
        raise ConfigError(
            f"elmo component '{name}': model = {model!r} is a spacy-elmo 0.1 setting; the model is now a block "
            f"([components.{name}.model] with @architectures = \"{ELMO_MODEL}\" and bilm = {model!r}). "
            "Rewrite the config with: python -m spacy_elmo upgrade-config OLD.cfg NEW.cfg"
        )
    check_requirement(nlp.meta, __version__)
    settings = ElmoSettings(
        layer=layer,
        mix_weights=mix_weights,
        mix_gamma=mix_gamma,
        store=store,
        set_vectors=set_vectors,
        frozen=frozen,
        feature_cache_mb=feature_cache_mb,
    )
    return Elmo(nlp.vocab, model, name, settings=settings, lang=nlp.lang)


class Elmo(TrainablePipe):
    """Runs an ELMo model over docs and shares its layers with downstream listeners.

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
        settings: Optional[ElmoSettings] = None,
        lang: Optional[str] = None,
    ) -> None:
        self.vocab = vocab
        self.lang = lang
        self.model = model
        self.name = name
        self.settings = settings or ElmoSettings()
        self.cfg: Dict[str, Any] = {}  # the settings live in the pipeline's config, not here
        self.listener_map: Dict[str, List[ElmoListener]] = {}
        self.feature_cache = FeatureCache(self.settings.feature_cache_mb * 2**20)
        self.layer_coefficients: Optional[np.ndarray] = None
        model.attrs["replace_listener"] = _replace_listener
        model.attrs["replace_listener_cfg"] = partial(_replace_listener_cfg, frozen=self.settings.frozen)
        install_extensions()

    @property
    def frozen(self) -> bool:
        """Whether the biLM's weights stay fixed in training."""
        return self.settings.frozen

    # --- weights ---------------------------------------------------------------------------

    @property
    def bilm(self) -> Any:
        """The biLM (a torch module, or an `OnnxBiLM` on runtime "onnxruntime"), or None before
        its weights are loaded."""
        return get_bilm(self.model)

    def initialize(self, get_examples: Optional[Callable[[], Iterable[Example]]] = None, *, nlp: Optional[Language] = None) -> None:
        """Load the biLM's weights from the source named in the model block; record the biLM's
        name and licence in the pipeline's meta (`sources`), so a saved pipeline carries them."""
        try:
            self.model.initialize()
        except SpacyElmoError as err:
            raise type(err)(f"elmo component '{self.name}': {err}") from err
        except ValueError as err:  # e.g. a JSONDecodeError, whose constructor takes more
            raise SpacyElmoError(f"elmo component '{self.name}': {err}") from err
        self._attach()
        for listener in self.listeners:  # until this component runs, its listeners see unannotated docs
            listener.initializing = True
        if nlp is not None:
            self._warn_if_nobody_listens(nlp)
            self._record_source(nlp)

    def _warn_if_nobody_listens(self, nlp: Language) -> None:
        trainable = [name for name, pipe in nlp.pipeline if name != self.name and isinstance(pipe, TrainablePipe)]
        if trainable and not self.listeners:
            warnings.warn(
                f"elmo component '{self.name}': no component listens to it, so {', '.join(trainable)} do not use "
                f"its features; give them a {ELMO_LISTENER} tok2vec (python -m spacy_elmo init-config "
                "writes such a config)",
                stacklevel=3,
            )

    def _record_source(self, nlp: Language) -> None:
        """Add the biLM's name, licence, training text and URL to the pipeline's meta `sources`."""
        info = self.model.attrs.get("bilm_info") or {}
        if info.get("name"):
            source = {"name": f"spacy-elmo biLM {info['name']}", "license": info.get("license", "")}
            source.update({key: info[key] for key in ("corpus", "url") if key in info})
            sources = nlp.meta.setdefault("sources", [])
            if source not in sources:
                sources.append(source)

    def _ensure_loaded(self) -> None:
        """Load and attach the weights on first use, once even when threads race to it."""
        if self.layer_coefficients is not None and self.bilm is not None:
            return
        with LOADING:
            if self.bilm is None:
                self.initialize()
            elif self.layer_coefficients is None:
                self._attach()

    def _attach(self) -> None:
        """Finish setting up loaded weights: freezing, the layer selection, listener sizes."""
        ensure_loaded(self.model)
        s = self.settings
        try:
            coefficients = layer_coefficients(s.layer, self.model.get_dim("n_layers"), s.mix_weights, s.mix_gamma)
        except ConfigError as err:
            raise ConfigError(f"elmo: {err}") from None
        try:
            set_frozen(self.model, s.frozen)
        except ConfigError as err:
            raise ConfigError(f"elmo component '{self.name}': {err}") from None
        model_lang = (self.model.attrs.get("bilm_info") or {}).get("lang")
        if self.lang and model_lang and model_lang != self.lang:
            warnings.warn(
                f"elmo component '{self.name}': the pipeline's language is {self.lang!r}, but its biLM was "
                f"trained on {model_lang!r} text; set [components.{self.name}.model] bilm to a {self.lang!r} model",
                stacklevel=2,
            )
        self.feature_cache.clear()
        for listener in self.listeners:
            self._set_listener_dims(listener)
        self.layer_coefficients = coefficients  # last: other threads take a set value as "ready"

    # --- prediction ------------------------------------------------------------------------

    def __call__(self, doc: Doc) -> Doc:
        install_extensions()
        return super().__call__(doc)

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        install_extensions()
        return super().pipe(stream, batch_size=batch_size)

    def predict(self, docs: Iterable[Doc]) -> List[Floats3d]:
        """All biLM layers per doc, float32 (n_layers, len(doc), width)."""
        self._ensure_loaded()
        self._end_initializing()
        docs = list(docs)
        return self.model.predict(docs) if docs else []

    def set_annotations(self, docs: Sequence[Doc], layers: Sequence[Floats3d]) -> None:
        """Set `doc._.elmo` (and, with `set_vectors`, `doc.tensor` and the vector hooks)."""
        coefficients = self.layer_coefficients
        store_all, set_vectors = self.settings.store == "all", self.settings.set_vectors
        for doc, doc_layers in zip(docs, layers):
            doc_layers = self.model.ops.to_numpy(doc_layers)
            # A copy, so that a stored selection does not keep all layers alive.
            selected = np.array(mix_layers(coefficients, doc_layers)) if set_vectors or not store_all else None
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
        Otherwise the listeners' gradients fine-tune the biLM. `drop` is the dropout rate on
        the layers handed over (a new mask per batch).
        """
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "Elmo.update")
        if not self.listeners:
            return losses
        self._ensure_loaded()
        self._end_initializing()
        docs = [eg.predicted for eg in examples]
        ops = self.model.ops
        if self.frozen:
            layers, bp_layers = self._cached_layers(docs), None
        else:
            layers, bp_layers = self.model.begin_update(docs)
        masks = [ops.get_dropout_mask(x.shape, drop) for x in layers] if drop else None
        if masks is not None:
            layers = [x * mask for x, mask in zip(layers, masks)]
        if bp_layers is None:
            accumulate_gradient = backprop = no_backprop
        else:
            d_layers = [ops.alloc(x.shape, dtype="f") for x in layers]

            def accumulate_gradient(one_d_layers: List[Floats3d]) -> List:
                for total, d in zip(d_layers, one_d_layers):
                    total += d
                    losses[self.name] += float((d**2).sum())  # type: ignore[index]
                return []

            def backprop(one_d_layers: List[Floats3d]) -> List:
                accumulate_gradient(one_d_layers)
                bp_layers([d * m for d, m in zip(d_layers, masks)] if masks is not None else d_layers)
                if sgd is not None:
                    self.finish_update(sgd)
                return []

        batch_id = ElmoListener.get_batch_id(docs)
        for listener in self.listeners[:-1]:
            listener.receive(batch_id, layers, accumulate_gradient)
        self.listeners[-1].receive(batch_id, layers, backprop)
        return losses

    def _end_initializing(self) -> None:
        for listener in self.listeners:
            listener.initializing = False

    def finish_update(self, sgd: Optimizer) -> None:
        """Update the biLM's weights, unless frozen."""
        if not self.frozen:
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
        if self.settings.store != "all":
            raise ConfigError(
                f"elmo component '{self.name}' has store = \"selected\", but '{component_name}' listens to it "
                "and needs all layers for its own mix: set store = \"all\""
            )
        self.listener_map.setdefault(component_name, [])
        if listener not in self.listener_map[component_name]:
            self.listener_map[component_name].append(listener)
        listener.component_name = component_name
        if self.bilm is not None:
            self._set_listener_dims(listener)

    def remove_listener(self, listener: ElmoListener, component_name: str) -> bool:
        """Remove a downstream listener (internals)."""
        if listener in self.listener_map.get(component_name, []):
            self.listener_map[component_name].remove(listener)
            listener.component_name = None
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
        for dim in ("nO", "n_layers"):
            value = self.model.get_dim(dim)
            known = listener.maybe_get_dim(dim)
            if known is not None and known != value:
                raise ConfigError(
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
        write_checksums(Path(path))

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "Elmo":
        verify_checksums(Path(path))
        try:
            super().from_disk(path, exclude=[*exclude, "cfg"])
        except ValueError as err:  # msgpack's "Unpack failed" of a damaged file, naming none
            if isinstance(err, SpacyElmoError):
                raise
            raise SpacyElmoError(f"{Path(path) / 'model'}: cannot be read ({err}); {ADVICE}") from None
        self._attach_deserialized()
        return self

    def _attach_deserialized(self) -> None:
        if self.bilm is not None:
            self._attach()

    # --- internals -------------------------------------------------------------------------

    def _cached_layers(self, docs: Sequence[Doc]) -> List[Floats3d]:
        """The frozen biLM's layers per doc, from the feature cache where stored."""
        keys = [_cache_key(doc) for doc in docs]
        layers: List[Optional[Floats3d]] = [self.feature_cache.get(key) for key in keys]
        missing = [i for i, found in enumerate(layers) if found is None]
        if missing:
            for i, computed in zip(missing, self.model.predict([docs[i] for i in missing])):
                layers[i] = computed
                self.feature_cache.put(keys[i], computed)
        return layers  # type: ignore[return-value]


def _cache_key(doc: Doc) -> Tuple[Tuple[str, ...], Tuple[int, ...]]:
    """What a doc's layers depend on: its tokens and, where set, its sentence starts."""
    starts = tuple(sent.start for sent in doc.sents) if doc.has_annotation("SENT_START") else ()
    return tuple(token.text for token in doc), starts


def _replace_listener(copied: Model, listener: ElmoListener, pipe: Elmo) -> Model:
    """spaCy's `replace_listeners` hook: the listener becomes a copy of the component's model
    (with its weights fixed when the component is frozen)."""
    ensure_loaded(copied)
    return with_fixed_weights(copied) if pipe.frozen else copied


def _replace_listener_cfg(model_cfg: Dict[str, Any], tok2vec_cfg: Dict[str, Any], *, frozen: bool) -> Dict[str, Any]:
    """spaCy's `replace_listeners` config hook: every `ElmoListener.v1` block in the downstream
    tok2vec config becomes an `ElmoEmbed.v1` block holding the component's model block."""

    def rewrite(block: Any) -> Any:
        if not isinstance(block, dict):
            return block
        if block.get("@architectures") == ELMO_LISTENER:
            kept = {key: value for key, value in block.items() if key not in ("@architectures", "upstream")}
            return {"@architectures": ELMO_EMBED, **kept, "frozen_elmo": frozen, "elmo": dict(model_cfg)}
        return {key: rewrite(value) for key, value in block.items()}

    return rewrite(tok2vec_cfg)

