"""The settings of the `elmo` component: one dataclass, validated in one place, whose defaults
the factory's default config (and the settings table of docs/usage.md) use."""
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional, Union

from ..errors import ConfigError
from ..layer_choice import check_layer_choice
from ..layers.elmo_model import ElmoModelSettings

STORES = ("all", "selected")


@dataclass(frozen=True)
class ElmoSettings:
    """What the `elmo` component does with the biLM's layers; the biLM itself is the model's.

    layer (Union[int, str]): what `token._.elmo` gives: a layer index (0 = token layer),
        "top", "average" (equal weights) or "mix" (`mix_weights` and `mix_gamma`).
    mix_weights (Optional[List[float]]): pre-softmax layer weights for "mix"; None = equal.
    mix_gamma (float): the scale γ for "mix".
    store (str): "all" layers in `doc._.elmo`, or only the "selected" representation.
    set_vectors (bool): also set `doc.tensor` and make `.vector`/`.similarity()` use ELMo.
    frozen (bool): keep the biLM's weights fixed in training (feature-based, as in the paper).
    feature_cache_mb (int): memory for caching a frozen biLM's training outputs; 0 disables.
    """

    layer: Union[int, str] = "average"
    mix_weights: Optional[List[float]] = None
    mix_gamma: float = 1.0
    store: str = "all"
    set_vectors: bool = False
    frozen: bool = True
    feature_cache_mb: int = 1024

    def __post_init__(self) -> None:
        object.__setattr__(self, "layer", _layer_index(self.layer))
        try:
            check_layer_choice(self.layer, self.mix_weights, self.mix_gamma)
        except ConfigError as err:
            raise ConfigError(f"elmo: {err}") from None
        if self.store not in STORES:
            raise ConfigError(f"elmo: unknown 'store' {self.store!r}; use one of {STORES}")
        if isinstance(self.feature_cache_mb, bool) or not isinstance(self.feature_cache_mb, int) or self.feature_cache_mb < 0:
            raise ConfigError(f"elmo: 'feature_cache_mb' must be a whole number, 0 or more, got {self.feature_cache_mb!r}")


def _layer_index(layer: Any) -> Any:
    """A layer index written as "1" or 1.0 is the index 1; anything else is left to the checks."""
    if isinstance(layer, str) and layer.strip().isdigit():
        return int(layer)
    if isinstance(layer, float) and layer.is_integer():
        return int(layer)
    return layer


def default_config() -> Dict[str, Any]:
    """The factory's default config: the component settings and the default model block."""
    return {**asdict(ElmoSettings()), "model": ElmoModelSettings().to_config()}
