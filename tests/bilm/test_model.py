"""Stateless embedding: a sentence's vectors depend on that sentence only."""
import numpy as np
import pytest

from spacy_elmo import load_bilm

SENTENCES = [
    ["The", "cat", "sat", "on", "the", "mat", "."],
    ["Play", "it", "again"],
    [],
    ["A"],
    "We went to see a play at the theatre last night .".split(),
    ["naïve", "東京", "🙂", "x" * 80, "\x00"],
]


@pytest.fixture(scope="module")
def bilm(allennlp_model_files):
    weights, options = allennlp_model_files
    return load_bilm(weights, options=options)


def test_shapes_and_empty_sentence(bilm):
    outputs = bilm.embed_sentences(SENTENCES)
    for sentence, array in zip(SENTENCES, outputs):
        assert array.shape == (3, len(sentence), 32)
        assert array.dtype == np.float32
        assert np.isfinite(array).all()
    assert bilm.embed_sentences([[]])[0].shape == (3, 0, 32)
    assert bilm.embed_sentences([]) == []


def test_independent_of_batch_company_order_size_and_history(bilm):
    alone = [bilm.embed_sentences([s])[0] for s in SENTENCES]
    for batch_size in (1, 2, 64):
        together = bilm.embed_sentences(SENTENCES, batch_size=batch_size)
        for a, b in zip(alone, together):
            np.testing.assert_allclose(a, b, atol=1e-5)
    reversed_outputs = bilm.embed_sentences(SENTENCES[::-1])[::-1]
    for a, b in zip(alone, reversed_outputs):
        np.testing.assert_allclose(a, b, atol=1e-5)
    bilm.embed_batch([["something", "else", "first"]] * 5, stateful=True)
    again = bilm.embed_batch(SENTENCES)
    for a, b in zip(alone, again):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_context_changes_the_vectors_of_the_same_word(bilm):
    game, theatre = bilm.embed_sentences([["Let", "us", "play", "chess"], ["We", "saw", "a", "play", "tonight"]])
    assert np.allclose(game[0, 2], theatre[0, 3])  # token layer: context-independent
    assert not np.allclose(game[2, 2], theatre[2, 3], atol=1e-3)


def test_max_tokens_splits_batches_without_changing_results(bilm):
    full = bilm.embed_sentences(SENTENCES)
    split = bilm.embed_sentences(SENTENCES, max_tokens=10)
    for a, b in zip(full, split):
        np.testing.assert_allclose(a, b, atol=1e-5)


@pytest.mark.parametrize("bad, message", [("a string", "string"), (["a", "b"], "sentence 0"), ([["a", 3]], "token 1")])
def test_bad_input_names_the_problem(bilm, bad, message):
    with pytest.raises(TypeError, match=message):
        bilm.embed_sentences(bad)


@pytest.mark.parametrize("compute_dtype,tolerance", [("float32", 1e-5), ("bfloat16", 0.1)])
def test_every_device_gives_the_cpu_vectors(allennlp_model_files, bilm, device, compute_dtype, tolerance):
    weights, options = allennlp_model_files
    placed = load_bilm(weights, options=options, device=device, compute_dtype=compute_dtype)
    for expected, actual in zip(bilm.embed_sentences(SENTENCES), placed.embed_sentences(SENTENCES)):
        assert actual.dtype == np.float32 and actual.shape == expected.shape
        np.testing.assert_allclose(actual, expected, rtol=tolerance, atol=tolerance)
