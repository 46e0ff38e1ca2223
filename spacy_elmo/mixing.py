"""ELMo's layer mix, γ · Σ_j s_j · h_j with s = softmax(w) (Peters et al. 2018, eq. 1): the
coefficients and their application, for numpy and cupy arrays alike.

Which layers a caller keeps (an index, "top", "average", a fixed "mix") is `layer_choice.py`'s;
one-hot coefficients return that layer itself, exactly.
"""
from typing import Any, Sequence

import numpy as np
from thinc.api import get_array_module


def softmax(weights: Any) -> Any:
    """softmax(w) of pre-softmax layer weights (numpy or cupy), computed stably."""
    xp = get_array_module(weights)
    shifted = xp.exp(weights - weights.max())
    return shifted / shifted.sum()


def mix_coefficients(weights: Sequence[float], gamma: float = 1.0) -> np.ndarray:
    """γ · softmax(w): the float32 weight of each layer in the mix."""
    return (gamma * softmax(np.asarray(weights, dtype=np.float64))).astype(np.float32)


def mix_layers(coefficients: Any, layers: Any) -> Any:
    """Σ_j c_j · h_j over the first axis of (n_layers, ..., width) layers, float32.

    One-hot coefficients return that layer itself (exact, no copy).
    """
    xp = get_array_module(layers)
    coefficients = xp.asarray(coefficients, dtype=layers.dtype)
    nonzero = xp.flatnonzero(coefficients)
    if nonzero.size == 1 and float(coefficients[int(nonzero[0])]) == 1.0:
        return layers[int(nonzero[0])]
    return xp.tensordot(coefficients, layers, axes=1).astype(xp.float32, copy=False)
