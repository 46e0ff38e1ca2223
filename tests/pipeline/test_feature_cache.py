"""`FeatureCache`: a bounded store of biLM outputs that drops what no longer fits, read-only copies,
and its counts."""
import numpy as np
import pytest

from spacy_elmo.pipeline.feature_cache import FeatureCache


def test_feature_cache_drops_entries_beyond_its_bound():
    cache = FeatureCache(max_bytes=1000)
    small, big = np.ones((3, 2, 32), np.float32), np.ones((3, 3, 32), np.float32)  # 768 and 1152 bytes
    cache.put(("a", "b"), small)
    cache.put(("c", "d", "e"), big)
    cache.put(("f", "g"), small)
    assert len(cache) == 1 and cache.n_bytes == 768 and cache.get(("c", "d", "e")) is None
    with pytest.raises(ValueError):
        cache.get(("a", "b"))[0, 0, 0] = 5.0


def test_a_stored_output_is_a_float32_copy_and_a_key_is_stored_once():
    cache = FeatureCache(max_bytes=10_000)
    output = np.arange(6, dtype=np.float64).reshape(1, 2, 3)
    cache.put("k", output)
    output[0, 0, 0] = 99.0  # the caller's array is not the stored one
    stored = cache.get("k")
    assert stored.dtype == np.float32 and cache.n_bytes == 24
    np.testing.assert_array_equal(stored, np.arange(6).reshape(1, 2, 3))
    cache.put("k", np.zeros((1, 2, 3), np.float32))
    np.testing.assert_array_equal(cache.get("k"), np.arange(6).reshape(1, 2, 3))
    assert len(cache) == 1 and cache.n_bytes == 24


def test_hits_misses_and_clear():
    cache = FeatureCache(max_bytes=1000)
    assert cache.get("a") is None
    cache.put("a", np.ones((2, 2), np.float32))
    assert cache.get("a") is not None and cache.get("a") is not None
    assert (cache.hits, cache.misses) == (2, 1)
    cache.clear()
    assert len(cache) == 0 and cache.n_bytes == 0 and cache.get("a") is None
    cache.put("b", np.ones((2, 2), np.float32))  # the freed bytes are available again
    assert len(cache) == 1 and cache.n_bytes == 16


def test_size_zero_stores_nothing_and_a_negative_size_is_refused():
    cache = FeatureCache(max_bytes=0)
    cache.put("a", np.ones((1, 1), np.float32))
    assert len(cache) == 0
    with pytest.raises(ValueError, match="the feature cache size must be 0 or more, got -1"):
        FeatureCache(max_bytes=-1)
