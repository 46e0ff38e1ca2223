"""ELMo's learned layer mix as a thinc layer, `LayerMix`: γ · Σ_j softmax(w)_j · h_j (Peters et
al. 2018, eq. 1), and the mixes a trained pipeline learned. Registered as `spacy-elmo.ScalarMix.v1`
(the name saved configs use); AllenNLP's torch module of the same maths is
`spacy_elmo.allennlp.ScalarMix`."""
from typing import Callable, Dict, List, Optional, Tuple

from spacy.language import Language
from thinc.api import Model
from thinc.types import Floats2d, Floats3d

from ..mixing import mix_layers, softmax

# The thinc node's name: saved pipelines carry it, and `learned_mixes` finds the mix by it.
NAME = "elmo_scalar_mix"


def LayerMix() -> Model[List[Floats3d], List[Floats2d]]:
    """Mix the layers (n_layers, n_tokens, width) of each doc into (n_tokens, width).

    Parameters: `W` (n_layers,), the pre-softmax weights, initialised to 0 (equal weights),
    and `gamma` (1,), initialised to 1. `n_layers` is inferred from the data at initialization.
    """
    return Model(NAME, forward, init=init, dims={"n_layers": None}, params={"W": None, "gamma": None})


def init(
    model: Model[List[Floats3d], List[Floats2d]], X: Optional[List[Floats3d]] = None, Y: Optional[List[Floats2d]] = None
) -> None:
    if X:
        model.set_dim("n_layers", X[0].shape[0])
    n_layers = model.get_dim("n_layers")
    model.set_param("W", model.ops.alloc1f(n_layers))
    model.set_param("gamma", model.ops.asarray1f([1.0]))


def forward(model: Model[List[Floats3d], List[Floats2d]], X: List[Floats3d], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    ops, xp = model.ops, model.ops.xp
    W, gamma = model.get_param("W"), float(model.get_param("gamma")[0])
    weights = softmax(W)
    lengths = [x.shape[1] for x in X]
    if not X:
        return [], lambda dY: []
    Xcat = xp.concatenate(X, axis=1)  # (n_layers, n_tokens, width)
    mixed = mix_layers(weights, Xcat)  # (n_tokens, width)
    Y = _split(gamma * mixed, lengths)

    def backprop(dY: List[Floats2d]) -> List[Floats3d]:
        dYcat = xp.concatenate(dY, axis=0)
        d_weights = gamma * xp.tensordot(Xcat, dYcat, axes=([1, 2], [0, 1]))
        model.inc_grad("W", weights * (d_weights - (weights * d_weights).sum()))
        model.inc_grad("gamma", ops.asarray1f([float((dYcat * mixed).sum())]))
        dXcat = (gamma * weights)[:, None, None] * dYcat[None]
        return _split(dXcat, lengths, axis=1)

    return Y, backprop


def learned_mixes(nlp: Language) -> Dict[str, Dict[str, object]]:
    """The layer mix each component of a pipeline learned, by component name: its
    softmax-normalized weights s_j ("weights"), the scale γ ("gamma") and the coefficients
    γ·s_j ("coefficients"). Components without an ELMo mix are left out; of a component with
    several mixes, the first is given.
    """
    mixes: Dict[str, Dict[str, object]] = {}
    for name, component in nlp.pipeline:
        model = getattr(component, "model", None)
        node = next((n for n in model.walk() if n.name == NAME), None) if isinstance(model, Model) else None
        if node is None or not node.has_param("W") or node.get_param("W") is None:
            continue
        weights = node.ops.to_numpy(softmax(node.get_param("W")))
        gamma = float(node.get_param("gamma")[0])
        mixes[name] = {
            "weights": [float(w) for w in weights],
            "gamma": gamma,
            "coefficients": [float(gamma * w) for w in weights],
        }
    return mixes


def _split(array, lengths: List[int], axis: int = 0) -> list:  # type: ignore[no-untyped-def]
    parts, start = [], 0
    for n in lengths:
        parts.append(array[:, start : start + n] if axis == 1 else array[start : start + n])
        start += n
    return parts
