"""Registered architectures: the ELMo model, and the tok2vec layers that feed its features to
any component taking a `tok2vec` (through a listener, or with a biLM of their own)."""
from typing import List, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Dropout, Linear, Model, chain, concatenate, with_array
from thinc.types import Floats2d, Floats3d

from .errors import ConfigError
from .layers.elmo_model import ElmoModelSettings, build_elmo_model, with_fixed_weights
from .layers.listener import ElmoListener
from .layers.layer_mix import LayerMix
from .registry_names import ELMO_EMBED, ELMO_LISTENER, ELMO_MODEL, ELMO_MODEL_V1, SCALAR_MIX
from .runtime import check_compute_dtype

# The name of the node that supplies the biLM layers inside a tok2vec built here.
FEATURES_REF = "elmo_features"


@registry.architectures(ELMO_MODEL)
def build_elmo_model_v2(
    bilm: Optional[str] = ElmoModelSettings.bilm,
    options: Optional[str] = ElmoModelSettings.options,
    context: str = ElmoModelSettings.context,
    window: int = ElmoModelSettings.window,
    stride: int = ElmoModelSettings.stride,
    batch_size: int = ElmoModelSettings.batch_size,
    max_tokens: int = ElmoModelSettings.max_tokens,
    device: str = ElmoModelSettings.device,
    compute_dtype: str = ElmoModelSettings.compute_dtype,
    runtime: str = ElmoModelSettings.runtime,
    keep_softmax: bool = ElmoModelSettings.keep_softmax,
) -> Model[List[Doc], List[Floats3d]]:
    """Docs in, every biLM layer per doc out: float32 (n_layers, len(doc), width). The
    settings, their meaning and their defaults are those of `ElmoModelSettings`.
    """
    settings = ElmoModelSettings(
        bilm=bilm,
        options=options,
        context=context,
        window=window,
        stride=stride,
        batch_size=batch_size,
        max_tokens=max_tokens,
        device=device,
        compute_dtype=compute_dtype,
        runtime=runtime,
        keep_softmax=keep_softmax,
    )
    return build_elmo_model(settings)


@registry.architectures(ELMO_MODEL_V1)
def build_elmo_model_v1(
    bilm: Optional[str] = ElmoModelSettings.bilm,
    options: Optional[str] = ElmoModelSettings.options,
    context: str = ElmoModelSettings.context,
    window: int = ElmoModelSettings.window,
    stride: int = ElmoModelSettings.stride,
    batch_size: int = ElmoModelSettings.batch_size,
    max_tokens: int = ElmoModelSettings.max_tokens,
    device: str = ElmoModelSettings.device,
    dtype: str = ElmoModelSettings.compute_dtype,
    keep_softmax: bool = ElmoModelSettings.keep_softmax,
) -> Model[List[Doc], List[Floats3d]]:
    """The model block of spacy-elmo 0.2's configs and saved pipelines: v2 on runtime "torch",
    with the compute dtype named `dtype`.
    """
    try:
        check_compute_dtype(dtype, "'dtype'")
    except ConfigError as err:
        raise ConfigError(f"elmo model: {err}") from None
    return build_elmo_model_v2(
        bilm=bilm,
        options=options,
        context=context,
        window=window,
        stride=stride,
        batch_size=batch_size,
        max_tokens=max_tokens,
        device=device,
        compute_dtype=dtype,
        runtime="torch",
        keep_softmax=keep_softmax,
    )


@registry.architectures(ELMO_LISTENER)
def build_elmo_listener_v1(
    width: int,
    upstream: str = "*",
    static_embed: Optional[Model[List[Doc], List[Floats2d]]] = None,
    dropout: float = 0.0,
) -> Model[List[Doc], List[Floats2d]]:
    """Token vectors for a downstream component from an upstream `elmo` component.

    The component learns its own scalar mix of the biLM layers (softmax weights + γ,
    initialised equal), optionally concatenates spaCy's static token features, and projects
    the result to `width`. The biLM itself is shared, run once by the `elmo` component.

    width (int): output width, e.g. 96 for a tagger or NER.
    upstream (str): name of the `elmo` component to listen to, or "*" for any.
    static_embed (Optional[Model[List[Doc], List[Floats2d]]]): e.g. `spacy.MultiHashEmbed.v2`,
        whose output is concatenated with the mix; None for ELMo alone.
    dropout (float): dropout on the projected vectors.
    RETURNS (Model[List[Doc], List[Floats2d]]): a tok2vec layer.
    """
    return _tok2vec(ElmoListener(upstream), width, static_embed, dropout)


@registry.architectures(ELMO_EMBED)
def build_elmo_embed_v1(
    elmo: Model[List[Doc], List[Floats3d]],
    width: int,
    static_embed: Optional[Model[List[Doc], List[Floats2d]]] = None,
    dropout: float = 0.0,
    frozen_elmo: bool = True,
) -> Model[List[Doc], List[Floats2d]]:
    """`spacy-elmo.ElmoListener.v1` with a biLM of its own instead of a listener: what
    `nlp.replace_listeners("elmo", ...)` writes, and a way to give one component ELMo alone.

    elmo (Model[List[Doc], List[Floats3d]]): e.g. `spacy-elmo.ElmoModel.v2`.
    width (int): output width.
    static_embed (Optional[Model[List[Doc], List[Floats2d]]]): concatenated with the mix.
    dropout (float): dropout on the projected vectors.
    frozen_elmo (bool): keep the biLM's weights fixed (feature-based, as in the paper).
    """
    return _tok2vec(with_fixed_weights(elmo) if frozen_elmo else elmo, width, static_embed, dropout)


@registry.architectures(SCALAR_MIX)
def build_scalar_mix_v1() -> Model[List[Floats3d], List[Floats2d]]:
    """`LayerMix`: the learned mix of biLM layers, per doc (n_layers, n_tokens, width) → (n_tokens, width)."""
    return LayerMix()


def _tok2vec(
    source: Model[List[Doc], List[Floats3d]],
    width: int,
    static_embed: Optional[Model[List[Doc], List[Floats2d]]],
    dropout: float,
) -> Model[List[Doc], List[Floats2d]]:
    """mix(source) [⊕ static_embed] → linear projection to `width` [→ dropout]."""
    mix = LayerMix()
    features: Model = chain(source, mix)
    if static_embed is not None:
        features = concatenate(features, static_embed)
    projection: Model = Linear(nO=width)
    model: Model[List[Doc], List[Floats2d]] = chain(
        features, with_array(chain(projection, Dropout(dropout)) if dropout > 0.0 else projection)
    )
    model.set_dim("nO", width)
    model.set_ref(FEATURES_REF, source)
    chain_init = model.init

    def init(model: Model, X: Optional[List[Doc]] = None, Y: Optional[List[Floats2d]] = None) -> None:
        # Without sample docs (a component that initializes its model before deserializing it,
        # as spacy-experimental's coref does), the sizes come from the listener once the biLM is
        # loaded; before that, there is nothing to allocate: the weights come with the bytes.
        if X is None:
            n_layers, layer_width = source.maybe_get_dim("n_layers"), source.maybe_get_dim("nO")
            static_width = static_embed.maybe_get_dim("nO") if static_embed is not None else 0
            if n_layers is None or layer_width is None or static_width is None:
                return
            mix.set_dim("n_layers", n_layers)
            projection.set_dim("nI", layer_width + static_width)
        chain_init(model, X=X, Y=Y)

    model.init = init
    return model
