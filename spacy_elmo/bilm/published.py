"""The architectures of the published English ELMo models, in the original options.json schema.

small: elmo_2x1024_128_2048cnn_1xhighway (13.6M parameters), medium:
elmo_2x2048_256_2048cnn_1xhighway (28.0M), original: elmo_2x4096_512_2048cnn_2xhighway (93.6M).
"""
from typing import Any, Dict

FILTERS_2048 = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]


def _options(lstm_dim: int, projection_dim: int, n_highway: int) -> Dict[str, Any]:
    """Options of a published English ELMo of the given sizes (2 layers, 2048 CNN filters)."""
    return {
        "lstm": {
            "dim": lstm_dim,
            "projection_dim": projection_dim,
            "n_layers": 2,
            "cell_clip": 3.0,
            "proj_clip": 3.0,
            "use_skip_connections": True,
        },
        "char_cnn": {
            "activation": "relu",
            "embedding": {"dim": 16},
            "filters": FILTERS_2048,
            "n_highway": n_highway,
            "n_characters": 262,
            "max_characters_per_token": 50,
        },
    }


PUBLISHED: Dict[str, Dict[str, Any]] = {
    "small": _options(lstm_dim=1024, projection_dim=128, n_highway=1),
    "medium": _options(lstm_dim=2048, projection_dim=256, n_highway=1),
    "original": _options(lstm_dim=4096, projection_dim=512, n_highway=2),
}
