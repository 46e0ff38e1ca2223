"""The old name of `spacy_elmo.ray_data` (deprecated): its public names, with a warning."""
import warnings
from typing import Any


def __getattr__(name: str) -> Any:
    from .. import ray_data

    if name not in ray_data.__all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn("spacy_elmo.distributed is deprecated; import from spacy_elmo.ray_data", DeprecationWarning, stacklevel=2)
    return getattr(ray_data, name)
