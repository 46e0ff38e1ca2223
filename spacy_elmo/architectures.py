"""Registered architectures that feed ELMo features to any component taking a `tok2vec`."""
from typing import List, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Dropout, Linear, Model, chain, concatenate, with_array
from thinc.types import Floats2d, Floats3d

from .layers.listener import ElmoListener
from .layers.scalar_mix import ScalarMix


@registry.architectures("spacy-elmo.ElmoListener.v1")
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
    listener = ElmoListener(upstream)
    features: Model = chain(listener, ScalarMix())
    if static_embed is not None:
        features = concatenate(features, static_embed)
    projection: Model = Linear(nO=width)
    if dropout > 0.0:
        projection = chain(projection, Dropout(dropout))
    model: Model[List[Doc], List[Floats2d]] = chain(features, with_array(projection))
    model.set_dim("nO", width)
    model.set_ref("listener", listener)
    return model


@registry.architectures("spacy-elmo.ScalarMix.v1")
def build_scalar_mix_v1() -> Model[List[Floats3d], List[Floats2d]]:
    """A learned scalar mix of biLM layers, per doc (n_layers, n_tokens, width) → (n_tokens, width)."""
    return ScalarMix()
