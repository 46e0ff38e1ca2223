"""The biLM reproduces the original TensorFlow outputs stored in the fixtures."""
import json

import h5py
import numpy as np
import pytest
import torch

from spacy_elmo import load_bilm


def expected_top_layer(folder, k: int, i: int) -> np.ndarray:
    with h5py.File(folder / f"lm_embeddings_{k}.hdf5", "r") as handle:
        data = handle[str(i)][...]
    return np.concatenate([data[0], data[1]], axis=-1)


@pytest.mark.parametrize("model, sentences_file", [("allennlp", "sentences.json"), ("bilm-tf/model", "lm_embeddings_sentences.json")])
def test_stateful_replay_matches_tensorflow(fixtures_dir, model, sentences_file, device):
    folder = fixtures_dir / model
    bilm = load_bilm(folder / "lm_weights.hdf5", options=folder / "options.json", device=device)
    sentences = json.loads((folder / sentences_file).read_text())
    for i in range(10):
        batch = [sentences[k][i].split() for k in range(3)]
        outputs = bilm.embed_batch(batch, stateful=True)
        for k in range(3):
            expected = expected_top_layer(folder, k, i)
            assert outputs[k].shape == (3, len(batch[k]), 32)
            assert np.allclose(outputs[k][2], expected, atol=1e-6), (i, k)


def test_stateless_matches_only_the_first_batch(fixtures_dir):
    folder = fixtures_dir / "allennlp"
    bilm = load_bilm(folder / "lm_weights.hdf5", options=folder / "options.json")
    sentences = json.loads((folder / "sentences.json").read_text())
    first = bilm.embed_sentences([sentences[k][0].split() for k in range(3)])
    for k in range(3):
        assert np.allclose(first[k][2], expected_top_layer(folder, k, 0), atol=1e-6)
    later = bilm.embed_sentences([sentences[0][5].split()])[0]
    assert not np.allclose(later[2], expected_top_layer(folder, 0, 5), atol=1e-3)


def test_reset_states_restarts_the_replay(fixtures_dir):
    folder = fixtures_dir / "allennlp"
    bilm = load_bilm(folder / "lm_weights.hdf5", options=folder / "options.json")
    sentences = json.loads((folder / "sentences.json").read_text())
    batch = [sentences[k][0].split() for k in range(3)]
    bilm.embed_batch(batch, stateful=True)
    bilm.reset_states()
    again = bilm.embed_batch(batch, stateful=True)
    assert np.allclose(again[0][2], expected_top_layer(folder, 0, 0), atol=1e-6)


def test_smaller_batch_keeps_the_state_of_unused_rows(allennlp_model_files):
    weights, options = allennlp_model_files
    bilm = load_bilm(weights, options=options)
    bilm.embed_batch([["a", "b"], ["c"], ["d", "e", "f"]], stateful=True)
    row2 = [(c[:, 2].clone(), h[:, 2].clone()) for c, h in bilm._state]
    bilm.embed_batch([["x"], ["y", "z"]], stateful=True)
    for (c, h), (c2, h2) in zip(bilm._state, row2):
        assert torch.equal(c[:, 2], c2) and torch.equal(h[:, 2], h2)


def test_token_layer_matches_dumped_token_embeddings(fixtures_dir):
    folder = fixtures_dir / "allennlp"
    bilm = load_bilm(folder / "lm_weights.hdf5", options=folder / "options.json")
    vocab = (folder / "vocab_test.txt").read_text(encoding="utf-8").split("\n")
    with h5py.File(folder / "elmo_token_embeddings.hdf5", "r") as handle:
        expected = handle["embedding"][...]
    assert len(vocab) == expected.shape[0] == 458
    with torch.inference_mode():
        actual = bilm.embed_tokens(vocab).numpy()
    assert np.allclose(actual, expected, atol=1e-6)
    # The same vectors appear as layer 0 ([e; e]) of a sentence.
    layers = bilm.embed_sentences([vocab[100:110]])[0]
    assert np.allclose(layers[0][:, :16], expected[100:110], atol=1e-6)
    assert np.allclose(layers[0][:, 16:], expected[100:110], atol=1e-6)


def test_padding_character_row_is_zero_and_markers_encode_as_tokens(allennlp_model_files):
    weights, options = allennlp_model_files
    bilm = load_bilm(weights, options=options)
    assert torch.count_nonzero(bilm.token_encoder.char_embedding.weight[0]) == 0
    with torch.inference_mode():
        markers = bilm.embed_tokens(["<S>", "</S>"])
        table = bilm._token_table(["<S>", "</S>", "word"])
    assert torch.allclose(markers, table[:2])
