"""scripts/convert_uner.py: the seeded random low-resource sample."""
import pytest

from . import load_script


@pytest.fixture(scope="module")
def convert_uner():
    return load_script("convert_uner")


def sentence(i):
    return [f"w{i}"], ["B-PER" if i % 3 == 0 else "O"], [False]


def test_the_random_sample_is_seeded_in_file_order_and_without_repeats(convert_uner):
    sentences = [sentence(i) for i in range(100)]
    sample = convert_uner.random_sample(sentences, 10, seed=0)
    assert sample == convert_uner.random_sample(sentences, 10, seed=0)
    assert sample != convert_uner.random_sample(sentences, 10, seed=1)
    indices = [sentences.index(s) for s in sample]
    assert len(set(indices)) == 10 and indices == sorted(indices)


def test_entities_are_counted_per_label(convert_uner):
    counts = convert_uner.count_entities([(["a", "b", "c"], ["B-PER", "I-PER", "B-LOC"], [True, True, False])])
    assert counts == {"PER": 1, "LOC": 1}
