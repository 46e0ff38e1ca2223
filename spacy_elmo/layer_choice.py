"""Which biLM layers a caller keeps: all of them, one, or a fixed mix of them.

One vocabulary for the `elmo` component's `layer`, the hdf5 file's and the Ray engine's
`layers`: a layer index (0 = token layer), "top", "average" (equal weights) or "mix"
(γ·softmax(w), from `mix_weights` and `mix_gamma`); where every layer can be kept, also "all".
The mix itself is `mixing.py`'s.
"""
from typing import Any, Optional, Sequence, Union

import numpy as np

from .errors import ConfigError
from .mixing import mix_coefficients, mix_layers

LayerChoice = Union[int, str]
ALL_LAYERS = "all"
NAMED_LAYERS = ("top", "average", "mix")


def check_layer_choice(
    layer: LayerChoice,
    mix_weights: Optional[Sequence[float]] = None,
    mix_gamma: float = 1.0,
    *,
    allow_all: bool = False,
    name: str = "layer",
) -> None:
    """Validate a layer choice before the number of layers is known.

    allow_all (bool): whether "all" (every layer, unmixed) is a choice here.
    name (str): the setting's name in the caller's words, for the error message.
    """
    named = (ALL_LAYERS, *NAMED_LAYERS) if allow_all else NAMED_LAYERS
    if isinstance(layer, bool) or not isinstance(layer, (int, str)):
        raise ConfigError(f"'{name}' must be an index or one of {named}, got {layer!r}")
    if isinstance(layer, int) and layer < 0:
        raise ConfigError(f"'{name}' index must be 0 or more (use \"top\" for the last layer), got {layer}")
    if isinstance(layer, str) and layer not in named:
        raise ConfigError(f"unknown '{name}' {layer!r}; use an index or one of {named}")
    if mix_weights is not None and layer != "mix":
        raise ConfigError(f"'mix_weights' is only used with {name} = \"mix\", but {name} = {layer!r}")
    if not np.isfinite(mix_gamma):
        raise ConfigError(f"'mix_gamma' must be finite, got {mix_gamma}")
    if mix_weights is not None and not np.all(np.isfinite(np.asarray(mix_weights, dtype=np.float64))):
        raise ConfigError(f"'mix_weights' must be finite, got {list(mix_weights)}")


def layer_coefficients(
    layer: LayerChoice, n_layers: int, mix_weights: Optional[Sequence[float]] = None, mix_gamma: float = 1.0, name: str = "layer"
) -> np.ndarray:
    """The weight of each layer in the kept vector: γ·softmax(w) for "mix", one-hot for an index.

    RETURNS (np.ndarray): float32 coefficients, shape (n_layers,).
    """
    check_layer_choice(layer, mix_weights, mix_gamma, name=name)
    coefficients = np.zeros((n_layers,), dtype=np.float32)
    if isinstance(layer, int):
        if layer >= n_layers:
            raise ConfigError(f"'{name}' {layer} is out of range: this biLM has layers 0..{n_layers - 1}")
        coefficients[layer] = 1.0
    elif layer == "top":
        coefficients[-1] = 1.0
    elif layer == "average":
        coefficients[:] = 1.0 / n_layers
    else:
        weights = np.zeros((n_layers,)) if mix_weights is None else np.asarray(mix_weights, dtype=np.float64)
        if weights.shape != (n_layers,):
            raise ConfigError(f"'mix_weights' has {weights.size} values but this biLM has {n_layers} layers")
        coefficients[:] = mix_coefficients(weights, mix_gamma)
    return coefficients


def select_layers(layers: Any, coefficients: Optional[np.ndarray]) -> Any:
    """All `layers` (n_layers, n_tokens, width) where `coefficients` is None ("all"), else their
    mix by `coefficients` (from `layer_coefficients`): (n_tokens, width)."""
    return layers if coefficients is None else mix_layers(coefficients, layers)
