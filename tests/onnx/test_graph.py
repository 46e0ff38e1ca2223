"""`BiLMGraph`, the module the ONNX export traces, run in torch (no ONNX needed): the biLM's
stateless layers from character ids, the token embeddings it computes for the runner's cache,
cached embeddings standing in for computed ones, and zeros at padding."""
import numpy as np
import pytest
import torch

from spacy_elmo.onnx.graph import BiLMGraph

from ..conftest import random_bilm

ATOL = 1e-5
SENTENCES = [["The", "cat", "sat", "on", "the", "mat", "."], ["x" * 30], ["A", "cat", "."]]


@pytest.fixture(scope="module")
def bilm():
    return random_bilm()


@pytest.fixture(scope="module")
def graph(bilm):
    return BiLMGraph(bilm).eval()


def inputs(sentences, vocabulary):
    """(token_index, lengths) of `sentences` as rows of `vocabulary`, padding at row 0."""
    width = max(len(s) for s in sentences)
    index = torch.zeros((len(sentences), width), dtype=torch.int64)
    for row, sentence in enumerate(sentences):
        index[row, : len(sentence)] = torch.tensor([vocabulary.index(token) for token in sentence])
    return index, torch.tensor([len(s) for s in sentences], dtype=torch.int64)


def assert_layers(layers, expected, sentences):
    assert layers.shape == (3, len(sentences), max(map(len, sentences)), 16)
    for row, (sentence, want) in enumerate(zip(sentences, expected)):
        np.testing.assert_allclose(layers[:, row, : len(sentence)].numpy(), want, atol=ATOL, rtol=0)
        assert not layers[:, row, len(sentence) :].any()  # padding is zero


def test_all_tokens_new_give_the_biLMs_layers_and_their_embeddings(bilm, graph):
    vocabulary = sorted({token for sentence in SENTENCES for token in sentence})
    char_ids = torch.from_numpy(bilm.characters.encode(vocabulary))
    with torch.no_grad():
        layers, new = graph(char_ids, torch.zeros((0, 8)), *inputs(SENTENCES, vocabulary))
        embeddings = bilm.embed_tokens(vocabulary)
    assert new.shape == (len(vocabulary), 8)
    np.testing.assert_allclose(new.numpy(), embeddings.numpy(), atol=ATOL, rtol=0)
    assert_layers(layers, bilm.embed_sentences(SENTENCES), SENTENCES)


def test_cached_embeddings_stand_in_for_computed_ones(bilm, graph):
    known_tokens, new_tokens = ["cat", ".", "The"], ["A", "sat", "on", "the", "mat", "x" * 30]
    with torch.no_grad():
        known = bilm.embed_tokens(known_tokens)
        layers, new = graph(torch.from_numpy(bilm.characters.encode(new_tokens)), known, *inputs(SENTENCES, known_tokens + new_tokens))
    assert new.shape == (len(new_tokens), 8)  # only the new tokens are computed
    assert_layers(layers, bilm.embed_sentences(SENTENCES), SENTENCES)


def test_a_call_carries_no_state_to_the_next(bilm, graph):
    sentence = [["A", "cat", "."]]
    char_ids = torch.from_numpy(bilm.characters.encode(sentence[0]))
    with torch.no_grad():
        first, _ = graph(char_ids, torch.zeros((0, 8)), *inputs(sentence, sentence[0]))
        second, _ = graph(char_ids, torch.zeros((0, 8)), *inputs(sentence, sentence[0]))
    torch.testing.assert_close(first, second, atol=0, rtol=0)
