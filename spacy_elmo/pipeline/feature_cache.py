"""A bounded store of biLM outputs keyed by what they depend on (a doc's tokens and sentence
starts), so a frozen biLM runs once per training doc."""
from typing import Any, Dict, Hashable, Optional

import numpy as np
from thinc.api import get_array_module

from ..errors import ConfigError


class FeatureCache:
    """Keeps outputs until `max_bytes` are used; later outputs are not stored (dropped).

    Dropping new entries, rather than evicting old ones, keeps a fixed part of a training set
    cached across epochs; least-recently-used eviction would miss every time once the
    training set outgrows the cache.

    max_bytes (int): memory bound; 0 disables the cache.
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ConfigError(f"elmo: the feature cache size must be 0 or more, got {max_bytes}")
        self.max_bytes = max_bytes
        self.n_bytes = 0
        self.hits = 0
        self.misses = 0
        self._store: Dict[Hashable, Any] = {}

    def __len__(self) -> int:
        return len(self._store)

    def get(self, key: Hashable) -> Optional[Any]:
        """The stored output for `key`, read-only, or None."""
        found = self._store.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, key: Hashable, output: Any) -> None:
        """Store a copy of `output` if it fits in the bound."""
        if key in self._store or self.n_bytes + output.nbytes > self.max_bytes:
            return
        xp = get_array_module(output)  # numpy, or cupy for features on a GPU
        stored = xp.array(output, dtype=xp.float32, copy=True)
        if xp is np:
            stored.flags.writeable = False
        self._store[key] = stored
        self.n_bytes += stored.nbytes

    def clear(self) -> None:
        """Forget every output (when the biLM's weights change)."""
        self._store.clear()
        self.n_bytes = 0
