"""Which biLM layer, or which fixed mix of layers, a component exposes per token."""
from typing import Optional, Sequence, Union

import numpy as np

from ..errors import ConfigError
from ..mixing import mix_coefficients

LayerSpec = Union[int, str]
NAMED_LAYERS = ("top", "average", "mix")


def check_layer_spec(layer: LayerSpec, mix_weights: Optional[Sequence[float]], mix_gamma: float) -> None:
    """Validate a layer spec before the number of layers is known.

    layer (Union[int, str]): a layer index (0 = token layer), "top", "average" or "mix".
    mix_weights (Optional[Sequence[float]]): pre-softmax weights for "mix"; None = equal.
    mix_gamma (float): the scale γ for "mix".
    """
    if isinstance(layer, bool) or not isinstance(layer, (int, str)):
        raise ConfigError(f"elmo: 'layer' must be an index or one of {NAMED_LAYERS}, got {layer!r}")
    if isinstance(layer, int) and layer < 0:
        raise ConfigError(f"elmo: 'layer' index must be 0 or more (use \"top\" for the last layer), got {layer}")
    if isinstance(layer, str) and layer not in NAMED_LAYERS:
        raise ConfigError(f"elmo: unknown 'layer' {layer!r}; use an index or one of {NAMED_LAYERS}")
    if mix_weights is not None and layer != "mix":
        raise ConfigError(f"elmo: 'mix_weights' is only used with layer = \"mix\", but layer = {layer!r}")
    if not np.isfinite(mix_gamma):
        raise ConfigError(f"elmo: 'mix_gamma' must be finite, got {mix_gamma}")
    if mix_weights is not None and not np.all(np.isfinite(np.asarray(mix_weights, dtype=np.float64))):
        raise ConfigError(f"elmo: 'mix_weights' must be finite, got {list(mix_weights)}")


def layer_coefficients(
    layer: LayerSpec, n_layers: int, mix_weights: Optional[Sequence[float]] = None, mix_gamma: float = 1.0
) -> np.ndarray:
    """The weight of each layer in the exposed vector: γ·softmax(w) for "mix", one-hot for an index.

    RETURNS (np.ndarray): float32 coefficients, shape (n_layers,).
    """
    check_layer_spec(layer, mix_weights, mix_gamma)
    coefficients = np.zeros((n_layers,), dtype=np.float32)
    if isinstance(layer, int):
        if layer >= n_layers:
            raise ConfigError(f"elmo: 'layer' {layer} is out of range: this biLM has layers 0..{n_layers - 1}")
        coefficients[layer] = 1.0
    elif layer == "top":
        coefficients[-1] = 1.0
    elif layer == "average":
        coefficients[:] = 1.0 / n_layers
    else:
        weights = np.zeros((n_layers,)) if mix_weights is None else np.asarray(mix_weights, dtype=np.float64)
        if weights.shape != (n_layers,):
            raise ConfigError(f"elmo: 'mix_weights' has {weights.size} values but this biLM has {n_layers} layers")
        coefficients[:] = mix_coefficients(weights, mix_gamma)
    return coefficients

