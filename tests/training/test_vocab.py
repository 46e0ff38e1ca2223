"""The softmax vocabulary of the pretraining data."""

import math
from collections import Counter
from pathlib import Path

import pytest

from spacy_elmo.training.errors import CorpusError
from spacy_elmo.training.vocab import SoftmaxVocab


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf8")
    return path


def test_vocab_from_counts_is_frequency_sorted_with_specials_first():
    counts = Counter({"b": 5, "a": 9, "c": 1, "d": 5, "<S>": 100})
    vocab = SoftmaxVocab.from_counts(counts)
    assert vocab.tokens == ["<S>", "</S>", "<UNK>", "a", "b", "d", "c"]
    assert SoftmaxVocab.from_counts(counts, max_size=5).tokens == ["<S>", "</S>", "<UNK>", "a", "b"]
    assert SoftmaxVocab.from_counts(counts, min_count=5).tokens[3:] == ["a", "b", "d"]
    assert vocab.ids(["a", "zzz", "c"]) == [3, 2, 6]


def test_log_frequencies_are_the_unigram_distribution_of_the_targets():
    counts = Counter({"a": 60, "b": 30, "c": 10, "rare": 0, "out": 20})
    vocab = SoftmaxVocab(["<S>", "</S>", "<UNK>", "a", "b", "c", "rare"])
    # 120 tokens and 10 sentences: 2 × 130 targets over both LMs, 20 of them <UNK> ("out") × 2
    logs = dict(zip(vocab.tokens, vocab.log_frequencies(counts, n_sentences=10)))
    total = 2 * 130 + len(vocab)
    assert math.isclose(math.exp(logs["a"]), 121 / total)
    assert math.isclose(math.exp(logs["<S>"]), 11 / total) and logs["<S>"] == logs["</S>"]
    assert math.isclose(math.exp(logs["<UNK>"]), 41 / total)
    assert math.isclose(math.exp(logs["rare"]), 1 / total)
    assert math.isclose(sum(math.exp(v) for v in logs.values()), 1.0)


def test_vocab_file_round_trip_and_errors(tmp_path):
    vocab = SoftmaxVocab.from_counts(Counter("x y y z z z".split()))
    vocab.to_file(tmp_path / "v.txt")
    assert SoftmaxVocab.from_file(tmp_path / "v.txt").tokens == vocab.tokens
    with pytest.raises(CorpusError, match="must start with"):
        SoftmaxVocab.from_file(write(tmp_path / "bad.txt", "a\nb\nc\n"))
    with pytest.raises(CorpusError, match="not found"):
        SoftmaxVocab.from_file(tmp_path / "missing.txt")


def test_bilm_tf_fixture_vocab_loads(fixtures_dir):
    vocab = SoftmaxVocab.from_file(fixtures_dir / "bilm-tf" / "train" / "vocab.txt")
    assert len(vocab) == 32 and vocab.tokens[:3] == ["<S>", "</S>", "<UNK>"]
