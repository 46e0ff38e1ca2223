"""The character-CNN token encoder: the highway formula, bilm-tf's initialisation, the activation,
the projection only where widths differ, and chunked encoding (length groups are tested in
tests/bilm/test_lstm_training.py)."""
import dataclasses

import pytest
import torch

from spacy_elmo.bilm import token_encoder
from spacy_elmo.bilm.token_encoder import CharTokenEncoder, Highway
from spacy_elmo.characters import CharacterMapper

from ..conftest import TINY_CONFIG

WORDS = ["a", "to", "the", "cat", "sat", "internationalisation", "Überraschung", "x" * 30, "."]


def encoder(config=TINY_CONFIG, seed=0):
    torch.manual_seed(seed)
    module = CharTokenEncoder(config)
    module.reset_parameters()
    return module.eval()


def ids(words, config=TINY_CONFIG):
    return torch.from_numpy(CharacterMapper(config.max_characters_per_token).encode(words))


def test_highway_carries_and_transforms_as_bilm_tf():
    highway = Highway(2)
    with torch.no_grad():
        highway.linear.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, -1.0], [0.0, 0.0], [0.0, 0.0]]))
        highway.linear.bias.copy_(torch.tensor([0.0, 0.0, 0.0, 100.0]))  # gates: t = 0.5, then t = 1
        y = highway(torch.tensor([[2.0, 3.0]]))
    # y = t * relu(x W_T + b_T) + (1 - t) * x
    torch.testing.assert_close(y, torch.tensor([[0.5 * 2.0 + 0.5 * 2.0, 1.0 * 0.0 + 0.0 * 3.0]]))


def test_reset_parameters_is_the_bilm_tf_initialisation():
    module = encoder()
    n = TINY_CONFIG.n_filters
    assert torch.count_nonzero(module.char_embedding.weight[0]) == 0  # the padding id
    assert module.char_embedding.weight.abs().max() <= 1.0
    for conv in module.convolutions:
        assert conv.weight.abs().max() <= 0.05 and torch.count_nonzero(conv.bias) == 0  # relu: uniform ±0.05
    bias = module.highways[0].linear.bias
    assert torch.count_nonzero(bias[:n]) == 0 and torch.all(bias[n:] == -2.0)  # the carry gate starts closed
    assert module.projection is not None and torch.count_nonzero(module.projection.bias) == 0


def test_tanh_cnn_weights_are_normal_and_the_features_bounded():
    config = dataclasses.replace(TINY_CONFIG, activation="tanh", n_highway=0, lstm_dim=32, projection_dim=TINY_CONFIG.n_filters)
    module = encoder(config)
    assert module.projection is None  # the CNN already has the width P
    assert max(conv.weight.abs().max() for conv in module.convolutions) > 0.05  # not relu's uniform init
    with torch.no_grad():
        out = module(ids(WORDS, config))
    assert out.shape == (len(WORDS), config.n_filters)
    assert out.abs().max() <= 1.0 and (out < 0).any()  # tanh, not relu


def test_a_token_encodes_the_same_alone_and_in_any_batch():
    module = encoder()
    with torch.no_grad():
        together = module(ids(WORDS))
        alone = torch.cat([module(ids([word])) for word in WORDS])
    assert together.shape == (len(WORDS), TINY_CONFIG.projection_dim)
    torch.testing.assert_close(together, alone, atol=1e-6, rtol=1e-5)
    assert not torch.allclose(together[0], together[1])


def test_inference_is_chunked_with_the_same_result(monkeypatch):
    module = encoder()
    words = [f"{w}{i}" for i in range(40) for w in WORDS]  # 360 tokens: 3 chunks of 128
    calls = []
    encode = module._encode_by_length
    monkeypatch.setattr(module, "_encode_by_length", lambda x: calls.append(len(x)) or encode(x))
    with torch.no_grad():
        chunked = module(ids(words))
    assert calls == [128, 128, 104] and token_encoder.CHUNK_TOKENS == 128
    calls.clear()
    with torch.enable_grad():
        whole = module(ids(words))
    assert calls == [360]  # with gradients: one piece
    torch.testing.assert_close(chunked, whole.detach(), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("n", [0, 1])
def test_empty_and_single_batches(n):
    out = encoder()(ids(WORDS[:n]))
    assert out.shape == (n, TINY_CONFIG.projection_dim)
