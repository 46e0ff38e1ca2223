"""`TokenEmbeddingCache` on its own: least-recently-used eviction, the version that empties it,
copies, growth, and pickling (its use inside the biLM: tests/bilm/test_modules.py)."""
import copy
import pickle

import torch

from spacy_elmo.bilm.token_cache import TokenEmbeddingCache

WIDTH = 2


class Encoder:
    """Encodes a token as [len, first character code]; records what it was asked."""

    def __init__(self):
        self.calls = []

    def __call__(self, tokens):
        self.calls.append(list(tokens))
        return torch.tensor([[float(len(t)), float(ord(t[0]))] for t in tokens])


def expected(tokens):
    return torch.tensor([[float(len(t)), float(ord(t[0]))] for t in tokens])


def rows(n):
    """A cache of `n` rows of float32 [WIDTH]."""
    return TokenEmbeddingCache(max_bytes=n * WIDTH * 4)


def test_only_misses_are_encoded_and_the_order_is_the_callers():
    cache, encode = rows(8), Encoder()
    assert torch.equal(cache.embed(["ab", "c"], encode, version=1), expected(["ab", "c"]))
    assert torch.equal(cache.embed(["dd", "ab", "eee", "c"], encode, version=1), expected(["dd", "ab", "eee", "c"]))
    assert encode.calls == [["ab", "c"], ["dd", "eee"]]
    assert len(cache) == 4


def test_the_least_recently_used_token_is_evicted_first():
    cache, encode = rows(3), Encoder()
    cache.embed(["a", "b", "c"], encode, 0)
    cache.embed(["a"], encode, 0)  # "b" is now the least recently used
    cache.embed(["d"], encode, 0)
    assert encode.calls[-1] == ["d"] and len(cache) == 3
    cache.embed(["a", "c", "d"], encode, 0)
    assert encode.calls[-1] == ["d"]  # no new call: all three were kept
    assert torch.equal(cache.embed(["b"], encode, 0), expected(["b"]))
    assert encode.calls[-1] == ["b"]  # "b" was the one evicted


def test_a_new_version_empties_the_cache():
    cache, encode = rows(8), Encoder()
    cache.embed(["a", "b"], encode, "v1")
    cache.embed(["a"], encode, "v2")
    assert encode.calls == [["a", "b"], ["a"]] and len(cache) == 1


def test_a_batch_larger_than_the_cache_is_served_uncached_in_order():
    cache, encode = rows(2), Encoder()
    cache.embed(["a"], encode, 0)
    out = cache.embed(["xyz", "a", "bb"], encode, 0)
    assert torch.equal(out, expected(["xyz", "a", "bb"]))
    assert encode.calls == [["a"], ["xyz", "bb"]]  # the hit "a" came from the cache
    assert len(cache) == 1


def test_results_are_copies_that_later_evictions_do_not_change():
    cache, encode = rows(1), Encoder()
    first = cache.embed(["a"], encode, 0)
    cache.embed(["zz"], encode, 0)  # overwrites the only row
    assert torch.equal(first, expected(["a"]))


def test_storage_grows_up_to_the_bound_and_keeps_its_rows():
    cache, encode = rows(5000), Encoder()
    words = [f"w{i}" for i in range(1500)]  # more than the first allocation of 1024 rows
    cache.embed(words[:1000], encode, 0)
    cache.embed(words[1000:], encode, 0)
    assert len(cache) == 1500 and len(encode.calls) == 2
    assert torch.equal(cache.embed(words, encode, 0), expected(words)) and len(encode.calls) == 2


def test_clear_copies_and_pickles_work():
    cache, encode = rows(4), Encoder()
    cache.embed(["a", "b"], encode, 0)
    for other in (copy.deepcopy(cache), pickle.loads(pickle.dumps(cache))):
        assert len(other) == 2 and other._lock is not cache._lock
        assert torch.equal(other.embed(["b", "a"], encode, 0), expected(["b", "a"]))
    assert len(encode.calls) == 1  # the copies served their rows without encoding
    cache.clear()
    assert len(cache) == 0
    cache.embed(["a"], encode, 0)
    assert encode.calls[-1] == ["a"]


def test_rows_made_in_inference_mode_are_written_outside_it():
    cache, encode = rows(8), Encoder()
    with torch.inference_mode():
        cache.embed(["a"], encode, 0)
    out = cache.embed(["a", "b"], encode, 0)  # writes "b" into storage made in inference mode
    assert torch.equal(out, expected(["a", "b"]))
