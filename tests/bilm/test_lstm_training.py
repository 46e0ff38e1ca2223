"""The training path of the biLM: the hand-written LSTM backward pass, the token encoder's
length groups, and bfloat16 autocast."""

from typing import List

import pytest
import torch
from torch.nn import functional as F

from spacy_elmo.bilm import BiLMArchitecture
from spacy_elmo.bilm import token_encoder
from spacy_elmo.bilm.lstm import BiLstmLayer, BiLstmStack
from spacy_elmo.training.presets import apply_overrides, preset_architecture

from ..conftest import random_bilm


def reference_layer(layer: BiLstmLayer, config: BiLMArchitecture, x, active: List[int], state):
    """The LSTM layer step by step through autograd (TensorFlow LSTMCell semantics)."""
    n_dir, batch_size, n_steps, _ = x.shape
    c, h = state
    projected = torch.einsum("dbti,dgi->dbtg", x, layer.input_weight) + layer.bias[:, None, None]
    cell = layer.cell_dim
    outputs = []
    for t in range(n_steps):
        n = active[t]
        if n == 0:
            outputs.append(x.new_zeros(n_dir, batch_size, layer.output_dim))
            continue
        z = projected[:, :n, t] + h[:, :n] @ layer.recurrent_weight.transpose(1, 2)
        i, f, o = torch.sigmoid(z[..., : 3 * cell]).chunk(3, dim=-1)
        g = torch.tanh(z[..., 3 * cell :])
        c_new = f * c[:, :n] + i * g
        if config.cell_clip is not None:
            c_new = c_new.clamp(-config.cell_clip, config.cell_clip)
        h_new = o * torch.tanh(c_new)
        if layer.projection is not None:
            h_new = h_new @ layer.projection.transpose(1, 2)
            if config.proj_clip is not None:
                h_new = h_new.clamp(-config.proj_clip, config.proj_clip)
        c = torch.cat([c_new, c[:, n:]], dim=1)
        h = torch.cat([h_new, h[:, n:]], dim=1)
        outputs.append(F.pad(h_new, (0, 0, 0, batch_size - n)))
    return torch.stack(outputs, dim=2), (c, h)


@pytest.mark.parametrize(
    "changes",
    [{}, {"lstm.proj_clip": 0.05, "lstm.cell_clip": 0.5}, {"lstm.projection_dim": 16, "lstm.cell_clip": None}],
    ids=["projection", "clipping-active", "no-projection"],
)
def test_layer_function_equals_autograd_through_the_steps(changes):
    options = apply_overrides(preset_architecture("tiny"), changes)
    config = BiLMArchitecture.from_options_json(options)
    torch.manual_seed(0)
    stack = BiLstmStack(config).double()
    stack.reset_parameters()
    with torch.no_grad():
        for layer in stack.layers:
            layer.bias.normal_()
    layer = stack.layers[0]
    width = layer.input_weight.shape[2]
    x = (torch.randn(2, 4, 6, width, dtype=torch.float64) * 3).requires_grad_()
    active = [4, 4, 3, 3, 1, 0]  # rows (sorted by length) of lengths 5, 4, 4, 2
    state = (
        torch.randn(2, 4, layer.cell_dim, dtype=torch.float64).requires_grad_(),
        torch.randn(2, 4, layer.output_dim, dtype=torch.float64).requires_grad_(),
    )
    inputs = [x, *state, *layer.parameters()]
    out, (c, h) = stack._run_layer_differentiable(layer, x, active, state)
    expected, (c_ref, h_ref) = reference_layer(layer, config, x, active, state)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(c, c_ref)
    torch.testing.assert_close(h, h_ref)
    weights = [torch.randn_like(t) for t in (out, c, h)]
    ours = torch.autograd.grad(sum((a * w).sum() for a, w in zip((out, c, h), weights)), inputs)
    theirs = torch.autograd.grad(
        sum((a * w).sum() for a, w in zip((expected, c_ref, h_ref), weights)), inputs
    )
    for mine, reference in zip(ours, theirs):
        torch.testing.assert_close(mine, reference)
    if changes.get("lstm.proj_clip"):
        assert (h_ref.abs() == changes["lstm.proj_clip"]).any()  # the clip did act


def test_length_groups_give_the_same_embeddings_and_gradients(monkeypatch):
    bilm = random_bilm().double()
    words = ["a", "to", "the", "word", "longer", "antidisestablishment", "x" * 60] * 12
    ids = torch.from_numpy(bilm.characters.encode(words))
    encoder = bilm.token_encoder
    grouped = encoder(ids)
    weights = torch.randn_like(grouped)
    grads = torch.autograd.grad((grouped * weights).sum(), list(encoder.parameters()))
    monkeypatch.setattr(token_encoder, "LENGTH_GROUPS", ())
    single = encoder(ids)
    single_grads = torch.autograd.grad((single * weights).sum(), list(encoder.parameters()))
    torch.testing.assert_close(grouped, single)
    for a, b in zip(grads, single_grads):
        torch.testing.assert_close(a, b)


def test_sampled_softmax_in_bfloat16_stays_close_to_float32():
    from spacy_elmo.training.sampled_softmax import LogUniformSampler, sampled_softmax_loss

    torch.manual_seed(0)
    hidden = torch.randn(600, 16, requires_grad=True)
    weight = (torch.randn(300, 16) * 0.3).requires_grad_()
    bias = torch.zeros(300, requires_grad=True)
    targets = torch.randint(0, 300, (600,))
    sampler = LogUniformSampler(300, 40)
    results = []
    for dtype in (torch.float32, torch.bfloat16):
        loss = sampled_softmax_loss(
            hidden, targets, weight, bias, sampler, torch.Generator().manual_seed(1), compute_dtype=dtype
        )
        grads = torch.autograd.grad(loss, [hidden, weight, bias])
        assert loss.dtype == torch.float32 and all(g.dtype == torch.float32 for g in grads)
        results.append((float(loss.detach()), grads))
    (full, full_grads), (low, low_grads) = results
    assert abs(full - low) < 2e-2 * full
    assert full != low  # the products did run in bfloat16
    for a, b in zip(full_grads, low_grads):
        assert float((a - b).norm() / a.norm()) < 0.05


def test_bfloat16_pretraining_keeps_float32_weights_and_follows_float32(tmp_path):
    from spacy_elmo.bilm import load_bilm
    from spacy_elmo.training import TrainingSettings, pretrain

    text = tmp_path / "text.txt"
    text.write_text("\n".join(f"the cat {w} sees a dog ." for w in ["big", "small", "red"] * 20), encoding="utf8")
    losses = {}
    for precision in ("float32", "bf16"):
        settings = TrainingSettings(
            batch_size=3, unroll_steps=5, negatives=8, epochs=None, max_steps=3, compute_dtype=precision
        )
        assert settings.compute_dtype in ("float32", "bfloat16")
        result = pretrain(tmp_path / precision, [text], preset_architecture("tiny"), settings, show_progress=False)
        losses[precision] = result.loss
        bilm = load_bilm(tmp_path / precision / "model")
        assert all(p.dtype == torch.float32 for p in bilm.parameters())
    assert losses["bf16"] == pytest.approx(losses["float32"], rel=0.05)
    assert losses["bf16"] != losses["float32"]


def test_compiled_cells_give_the_eager_layer_and_gradients():
    """`compiled_cells` (torch.compile'd element-wise steps, tanh written with a sigmoid) is the
    same layer as the eager steps, in float32 and with bfloat16 products."""
    options = apply_overrides(preset_architecture("tiny"), {"lstm.proj_clip": 0.05, "lstm.cell_clip": 0.5})
    config = BiLMArchitecture.from_options_json(options)
    torch.manual_seed(0)
    stack = BiLstmStack(config)
    stack.reset_parameters()
    layer = stack.layers[0]
    x = torch.randn(2, 4, 6, layer.input_weight.shape[2]) * 3
    active = [4, 4, 3, 3, 1, 0]
    state = (torch.randn(2, 4, layer.cell_dim), torch.randn(2, 4, layer.output_dim))
    for dtype in (torch.float32, torch.bfloat16):
        results = []
        for compiled in (False, True):
            stack.compiled_cells = compiled
            inputs = [x.clone().requires_grad_(), *(s.clone().requires_grad_() for s in state)]
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == torch.bfloat16):
                out, (c, h) = stack._run_layer_differentiable(layer, inputs[0], active, tuple(inputs[1:]))
            loss = (out * torch.linspace(-1, 1, out.shape[-1])).sum() + c.sum() + h.sum()
            grads = torch.autograd.grad(loss, inputs + list(layer.parameters()))
            results.append((out, c, h, grads))
        (out, c, h, grads), (out_c, c_c, h_c, grads_c) = results
        tolerance = {"atol": 1e-5, "rtol": 1e-4} if dtype == torch.float32 else {"atol": 2e-2, "rtol": 2e-2}
        for eager, fused in zip((out, c, h, *grads), (out_c, c_c, h_c, *grads_c)):
            torch.testing.assert_close(fused, eager, **tolerance)
