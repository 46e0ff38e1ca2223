"""A bounded least-recently-used cache of token embeddings, keyed by token string."""
import threading
from collections import OrderedDict
from typing import Callable, Hashable, List, Optional, Sequence

import torch

from ..runtime import DEFAULT_CACHE_BYTES


class TokenEmbeddingCache:
    """Keep the encoder output of recently seen token strings in one preallocated matrix.

    Exact: the token encoder is context-independent. The cache empties itself when `version`
    (a fingerprint of the encoder weights) changes, so trained or reloaded weights are never
    served stale. Memory is bounded by `max_bytes`. Safe under threads: one lock guards the
    slots and the storage, so concurrent calls never share or overwrite each other's rows.
    """

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._slots: "OrderedDict[str, int]" = OrderedDict()
        self._storage: Optional[torch.Tensor] = None
        self._version: Hashable = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._slots)

    def __getstate__(self) -> dict:
        # Copies and pickles (`copy.deepcopy`, `n_process` workers) get a lock of their own.
        return {key: value for key, value in self.__dict__.items() if key != "_lock"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._clear()

    def _clear(self) -> None:
        self._slots.clear()
        self._storage = None

    def embed(
        self,
        tokens: Sequence[str],
        encode: Callable[[Sequence[str]], torch.Tensor],
        version: Hashable,
    ) -> torch.Tensor:
        """Return (len(tokens), P) embeddings of distinct `tokens`, calling `encode` on the misses.

        The result is a copy: later calls that evict or overwrite rows do not change it.
        """
        with self._lock:
            return self._embed(tokens, encode, version)

    def _embed(self, tokens: Sequence[str], encode: Callable[[Sequence[str]], torch.Tensor], version: Hashable) -> torch.Tensor:
        if version != self._version:
            self._clear()
            self._version = version
        missing = []
        for token in tokens:
            if token in self._slots:
                self._slots.move_to_end(token)
            else:
                missing.append(token)
        if missing:
            vectors = encode(missing)
            if not self._store(missing, vectors, n_needed=len(tokens)):
                # The batch alone exceeds the cache: serve it without caching.
                hits = {t: self._storage[self._slots[t]] for t in tokens if t in self._slots}
                fresh = dict(zip(missing, vectors))
                return torch.stack([hits[t] if t in hits else fresh[t] for t in tokens])
        slots = [self._slots[token] for token in tokens]
        assert self._storage is not None
        return self._storage[torch.tensor(slots, device=self._storage.device)]

    def _capacity(self, vectors: torch.Tensor) -> int:
        return self.max_bytes // max(1, vectors.shape[1] * vectors.element_size())

    def _store(self, tokens: List[str], vectors: torch.Tensor, n_needed: int) -> bool:
        capacity = self._capacity(vectors)
        if n_needed > capacity:
            return False
        storage = self._storage
        if storage is None or storage.dtype != vectors.dtype or storage.device != vectors.device:
            self._slots.clear()
            storage = _normal_empty(vectors, min(capacity, max(1024, n_needed)))
        needed = len(self._slots) + len(tokens)
        if needed > storage.shape[0] and storage.shape[0] < capacity:
            grown = _normal_empty(vectors, min(capacity, max(needed, 2 * storage.shape[0])))
            grown[: storage.shape[0]] = storage
            storage = grown
        self._storage = storage
        free = list(range(len(self._slots), storage.shape[0]))[: len(tokens)]
        for token in tokens[len(free) :]:
            # Evict the least recently used; rows of this batch were touched last, so survive.
            _, slot = self._slots.popitem(last=False)
            free.append(slot)
        storage[torch.tensor(free, device=storage.device)] = vectors
        for token, slot in zip(tokens, free):
            self._slots[token] = slot
        return True


def _normal_empty(like: torch.Tensor, n_rows: int) -> torch.Tensor:
    """Rows for the cache that are not inference tensors, even when made under
    `torch.inference_mode`, so that a later call outside it can still write to them."""
    with torch.inference_mode(False):
        return torch.empty((n_rows, like.shape[1]), dtype=like.dtype, device=like.device)
