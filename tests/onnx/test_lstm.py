"""`ExportLstm` and `lstm_steps`, the biLM's LSTM layers as the ONNX export writes them: the
same outputs as `BiLstmStack` from the same start state on rows of different lengths (packed),
TensorFlow's clipping of the cell and the projection, run in torch (no ONNX needed)."""
import dataclasses
import math

import pytest
import torch

from spacy_elmo.bilm.lstm import BiLstmStack
from spacy_elmo.onnx.lstm import ExportLstm, _lstm_steps, lstm_steps

from ..conftest import TINY_CONFIG


def packed(inputs, lengths):
    """(B, T, I) rows ordered longest first to their (N, I) valid slots, time-major, and the
    (T,) number of rows of each step."""
    active = (torch.arange(inputs.shape[1]).unsqueeze(1) < lengths.unsqueeze(0)).sum(dim=1)
    return torch.cat([inputs[:k, t] for t, k in enumerate(active.tolist())]), active


@pytest.mark.parametrize(
    "config",
    [dataclasses.replace(TINY_CONFIG, n_layers=1), dataclasses.replace(TINY_CONFIG, n_layers=1, projection_dim=24, cell_clip=None, proj_clip=None)],
    ids=["projection-and-clipping", "neither"],
)
def test_each_direction_gives_the_stacks_outputs_from_the_same_start(config):
    torch.manual_seed(0)
    stack = BiLstmStack(config)
    stack.reset_parameters()
    layer = stack.layers[0]
    width, batch, steps = layer.input_weight.shape[2], 4, 5
    lengths = torch.tensor([5, 3, 3, 1])
    start = (torch.randn(2, 1, layer.cell_dim), torch.randn(2, 1, layer.output_dim))
    inputs = torch.randn(2, batch, steps, width) * 3  # large enough for the clipping to act
    with torch.no_grad():
        state = [(start[0].expand(-1, batch, -1).contiguous(), start[1].expand(-1, batch, -1).contiguous())]
        (expected,), _ = stack(inputs, lengths, state)
        for direction in (0, 1):
            exported = ExportLstm(layer, direction, start, config.cell_clip, config.proj_clip)
            assert exported.project == (config.projection_dim != config.lstm_dim)
            x, active = packed(inputs[direction], lengths)
            got = exported(exported.input_products(x), active, batch)
            want, _ = packed(expected[direction], lengths)
            assert got.shape == (int(lengths.sum()), layer.output_dim)
            torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_no_clipping_is_an_infinite_bound():
    stack = BiLstmStack(dataclasses.replace(TINY_CONFIG, n_layers=1))
    layer = stack.layers[0]
    start = (torch.zeros(2, 1, layer.cell_dim), torch.zeros(2, 1, layer.output_dim))
    exported = ExportLstm(layer, 0, start, None, 2.5)
    assert exported.cell_clip == math.inf and exported.proj_clip == 2.5


@pytest.mark.parametrize("steps", [lstm_steps, _lstm_steps], ids=["scripted", "python"])
def test_one_step_clips_the_cell_then_the_projection(steps):
    # Gates i, f, o saturated open and the candidate at tanh(50) = 1: c = 5 + 1 = 6, clipped to 3;
    # h = tanh(3), projected by 10 to 9.95, clipped to 2.
    inputs, active = torch.tensor([[50.0, 50.0, 50.0, 50.0]]), torch.tensor([1])  # (N=1, 4C), T=1
    recurrent, projection = torch.zeros(1, 4), torch.tensor([[10.0]])
    c, h = torch.tensor([[5.0]]), torch.zeros(1, 1)
    clipped = steps(inputs, active, recurrent, projection, c, h, 3.0, 2.0, True)
    assert clipped.shape == (1, 1) and clipped.item() == pytest.approx(2.0)
    unclipped = steps(inputs, active, recurrent, projection, c, h, math.inf, math.inf, True)
    assert unclipped.item() == pytest.approx(10 * math.tanh(6.0), rel=1e-6)
    unprojected = steps(inputs, active, recurrent, torch.empty(0), c, h, 3.0, 2.0, False)
    assert unprojected.item() == pytest.approx(math.tanh(3.0), rel=1e-6)


def test_the_recurrent_state_carries_from_step_to_step():
    # Zero inputs, forget gate at 0.5, input gate at 0.5, candidate tanh(0) = 0: c halves each step.
    inputs, active = torch.zeros(3, 4), torch.tensor([1, 1, 1])
    recurrent = torch.zeros(1, 4)
    out = lstm_steps(inputs, active, recurrent, torch.empty(0), torch.tensor([[4.0]]), torch.zeros(1, 1), math.inf, math.inf, False)
    expected = [math.tanh(c) * 0.5 for c in (2.0, 1.0, 0.5)]  # h = tanh(c) · sigmoid(0)
    assert out.flatten().tolist() == pytest.approx(expected, rel=1e-6)


def test_rows_past_their_length_are_not_computed():
    # Two rows, the second one step long, each its own start: 3 slots, step 0's two then step 1's one.
    inputs, active = torch.zeros(3, 4), torch.tensor([2, 1])
    c, h = torch.tensor([[4.0], [8.0]]), torch.zeros(2, 1)
    out = lstm_steps(inputs, active, torch.zeros(1, 4), torch.empty(0), c, h, math.inf, math.inf, False)
    expected = [math.tanh(c) * 0.5 for c in (2.0, 4.0, 1.0)]  # c halves each step
    assert out.flatten().tolist() == pytest.approx(expected, rel=1e-6)
