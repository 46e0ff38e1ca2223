"""`BiLstmStack` and `BiLstmLayer`: the inference and differentiable paths, rows in any order, the
first layer from a table of distinct tokens, input chunking and the initialisation (the
hand-written backward pass of the differentiable path: tests/bilm/test_lstm_training.py)."""
import pytest
import torch

from spacy_elmo.bilm import lstm
from spacy_elmo.bilm.lstm import BiLstmLayer

from ..conftest import random_bilm


def test_differentiable_path_equals_inference_path_with_unsorted_rows():
    bilm = random_bilm()
    inputs = torch.randn(2, 3, 6, 8)
    lengths = torch.tensor([2, 6, 4])
    with torch.inference_mode():
        fast, fast_state = bilm.lstm(inputs, lengths)
    with torch.enable_grad():
        slow, slow_state = bilm.lstm(inputs, lengths)
    for a, b in zip(fast, slow):
        torch.testing.assert_close(a, b.detach(), atol=1e-6, rtol=1e-5)
        assert torch.count_nonzero(a[:, 0, 2:]) == 0  # zeros past each length
    for (c1, h1), (c2, h2) in zip(fast_state, slow_state):
        torch.testing.assert_close(c1, c2.detach(), atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(h1, h2.detach(), atol=1e-6, rtol=1e-5)


def test_first_layer_from_a_token_table_equals_dense_inputs():
    bilm = random_bilm()
    table = torch.randn(5, 8)
    token_ids = torch.tensor([[[0, 1, 1, 2, 0, 0], [3, 1, 1, 1, 4, 0]]] * 2)  # (2, B=2, T=6)
    lengths = torch.tensor([4, 6])
    with torch.inference_mode():
        assert bilm.lstm._worth_a_table(table, token_ids, 0.0)
        from_table, state_a = bilm.lstm(table, lengths, token_ids=token_ids)
        dense, state_b = bilm.lstm(table[token_ids], lengths)
    for a, b in zip(from_table, dense):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)
    for (c1, h1), (c2, h2) in zip(state_a, state_b):
        torch.testing.assert_close(c1, c2, atol=1e-6, rtol=1e-5)


def test_reset_parameters_gives_the_forget_bias_of_one_and_glorot_bounds():
    layer = BiLstmLayer(input_dim=8, cell_dim=6, output_dim=4, project=True)
    torch.manual_seed(0)
    layer.reset_parameters()
    forget = torch.zeros(2, 24, dtype=torch.bool)
    forget[:, 6:12] = True  # gate order i, f, o, g
    assert torch.all(layer.bias[forget] == 1.0) and torch.all(layer.bias[~forget] == 0.0)
    kernel_bound = (6.0 / (8 + 4 + 4 * 6)) ** 0.5
    assert layer.input_weight.abs().max() <= kernel_bound and layer.recurrent_weight.abs().max() <= kernel_bound
    assert layer.projection.abs().max() <= (6.0 / (6 + 4)) ** 0.5
    assert not torch.equal(layer.input_weight[0], layer.input_weight[1])  # each direction drawn on its own
    assert BiLstmLayer(8, 6, 6, project=False).projection is None


@pytest.mark.parametrize("steps_per_chunk", [1, 2])
def test_input_products_in_chunks_of_steps_give_the_same_outputs(monkeypatch, steps_per_chunk):
    bilm = random_bilm()
    torch.manual_seed(1)
    inputs = torch.randn(2, 3, 7, 8)
    lengths = torch.tensor([7, 3, 5])
    with torch.inference_mode():
        whole, whole_state = bilm.lstm(inputs, lengths)
        layer = bilm.lstm.layers[0]
        row_bytes = 2 * 4 * layer.cell_dim * inputs.element_size()
        monkeypatch.setattr(lstm, "INPUT_CHUNK_BYTES", steps_per_chunk * row_bytes * 3)
        chunked, chunked_state = bilm.lstm(inputs, lengths)
    for a, b in zip(whole, chunked):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)
    for (c1, h1), (c2, h2) in zip(whole_state, chunked_state):
        torch.testing.assert_close(c1, c2, atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(h1, h2, atol=1e-6, rtol=1e-5)


def test_a_token_table_is_used_only_where_it_is_exact_and_saves_work():
    stack = random_bilm().lstm
    table = torch.randn(3, 8)
    repeated = torch.zeros(2, 2, 6, dtype=torch.long)  # 3 distinct tokens over 12 positions
    with torch.inference_mode():
        assert stack._worth_a_table(table, repeated, dropout=0.0)
        assert stack._worth_a_table(table, repeated, dropout=0.5)  # eval mode: no dropout applied
        assert not stack._worth_a_table(torch.randn(12, 8), repeated, dropout=0.0)  # as many rows as positions
        stack.train()
        assert not stack._worth_a_table(table, repeated, dropout=0.5)  # dropout differs per position
    with torch.enable_grad():
        stack.eval()
        assert not stack._worth_a_table(table, repeated, dropout=0.0)
