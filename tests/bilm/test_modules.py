"""Building blocks: scalar mix, the biLM's gradients and two forward paths, the token-embedding cache
(the LSTM stack itself: tests/bilm/test_lstm.py)."""
import numpy as np
import pytest
import torch

from spacy_elmo.allennlp import ScalarMix
from spacy_elmo.bilm import save_bilm
from spacy_elmo.bilm.token_cache import TokenEmbeddingCache

from ..conftest import random_bilm


def test_scalar_mix_matches_the_formula():
    layers = torch.randn(3, 4, 5, 6)
    mix = ScalarMix(3, weights=[0.1, 0.2, 0.3], gamma=0.5)
    s = np.exp([0.1, 0.2, 0.3]) / np.exp([0.1, 0.2, 0.3]).sum()
    expected = 0.5 * sum(s[j] * layers[j].numpy() for j in range(3))
    np.testing.assert_allclose(mix(layers).detach().numpy(), expected, atol=1e-6)


def test_scalar_mix_starts_equal_and_learns():
    mix = ScalarMix(3)
    assert torch.allclose(mix.normalized_weights(), torch.full((3,), 1 / 3))
    layers = torch.randn(3, 2, 4)
    mix(layers).sum().backward()
    assert mix.weights.grad is not None and mix.gamma.grad is not None
    frozen = ScalarMix(3, trainable=False)
    assert not frozen.weights.requires_grad and not frozen.gamma.requires_grad


def test_scalar_mix_layer_norm_uses_masked_statistics():
    layers = torch.randn(2, 3, 4, 5)
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool)
    mix = ScalarMix(2, weights=[0.0, 0.0], layer_norm=True)
    out = mix(layers, mask).detach().numpy()
    expected = 0
    for j in range(2):
        values = layers[j].numpy()[mask.numpy()]
        expected = expected + 0.5 * (layers[j].numpy() - values.mean()) / np.sqrt(values.var() + 1e-13)
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_gradients_reach_every_parameter():
    bilm = random_bilm().train()
    layers = bilm.layer_tensors([["a", "b", "c"], ["d"]])
    sum(layer.sum() for layer in layers).backward()
    missing = [n for n, p in bilm.named_parameters() if p.grad is None or not torch.any(p.grad != 0)]
    assert missing == []


def test_cache_is_bounded_and_follows_weight_changes():
    bilm = random_bilm()
    width = bilm.config.projection_dim
    bilm.token_cache = TokenEmbeddingCache(max_bytes=10 * width * 4)
    words = [f"w{i}" for i in range(25)]
    with torch.inference_mode():
        for start in range(0, 25, 5):
            table = bilm._token_table(words[start : start + 5])
            torch.testing.assert_close(table, bilm.embed_tokens(words[start : start + 5]))
            assert len(bilm.token_cache) <= 10
        big = bilm._token_table(words)  # more than the cache holds: served uncached
        torch.testing.assert_close(big, bilm.embed_tokens(words))
    before = bilm.embed_sentences([["w1", "w2"]])[0]
    with torch.no_grad():
        bilm.token_encoder.projection.bias.add_(1.0)
    after = bilm.embed_sentences([["w1", "w2"]])[0]
    with torch.inference_mode():
        fresh = bilm.embed_tokens(["w1", "w2"]).numpy()
    np.testing.assert_allclose(after[0][:, :width], fresh, atol=1e-6)
    assert not np.allclose(before[0], after[0])


def test_cache_filled_in_inference_mode_serves_a_frozen_model_with_gradients_on():
    """A frozen biLM run first under inference mode (`embed_sentences`) and then with autograd
    on (a frozen feature extractor inside a user's torch model) caches new tokens in both."""
    bilm = random_bilm()
    bilm.requires_grad_(False)
    first = bilm.embed_sentences([["a", "cat"]])[0]
    layers = bilm.layer_tensors([["a", "dog", "sat"]])  # writes new tokens into the cache
    # the token layer of "a dog": the same whether the cache or the encoder served it
    np.testing.assert_allclose(layers[0][0, :2].numpy(), bilm.embed_sentences([["a", "dog"]])[0][0, :2], atol=1e-6)
    assert first.shape[1] == 2 and len(bilm.token_cache) >= 5


@pytest.mark.parametrize("dtype", ["bfloat16"])
def test_bfloat16_stays_close_to_float32(tmp_path, dtype):
    from spacy_elmo import load_bilm

    save_bilm(random_bilm(), tmp_path / "m")
    full = load_bilm(tmp_path / "m").embed_sentences([["some", "words", "here"]])[0]
    low = load_bilm(tmp_path / "m", compute_dtype=dtype).embed_sentences([["some", "words", "here"]])[0]
    assert low.dtype == np.float32
    assert np.abs(full - low).max() < 0.1
    assert not np.array_equal(full, low)


def test_trainable_forward_equals_inference_forward():
    bilm = random_bilm()
    sentences = [["a", "longer", "sentence", "here"], [], ["b"]]
    expected = bilm.embed_sentences(sentences)
    with torch.enable_grad():
        tensors = bilm.layer_tensors(sentences)
    assert tensors[0].requires_grad
    for a, b in zip(expected, tensors):
        np.testing.assert_allclose(a, b.detach().numpy(), atol=1e-6)
