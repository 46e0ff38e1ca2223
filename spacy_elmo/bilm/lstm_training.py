"""One LSTM layer (both directions) over a whole window as a single autograd node.

Training runs the cell step by step; through autograd that is some twenty small nodes per step,
each with its own temporaries, and the weight gradients as one small product per step. Here the
forward pass runs the steps without autograd, keeping only the activated gates, cell states and
cell outputs, and the backward pass runs the steps in reverse by hand, then computes each weight
gradient as one large product over all steps. Same maths as the inference cell (TensorFlow
LSTMCell with projection and clipping); tests compare it with autograd through the step-by-step
cell.

The element-wise part of a step (gates, cell update, clipping, and their derivatives) is two
functions, `cell_forward` and `cell_backward`. Eager, each is a dozen passes over the gates;
compiled with `torch.compile` (`compiled=True`), each is one fused loop, and it also writes the
16-bit copies that the next matrix product reads. On CPU these passes, not the products, take
most of a step's time.

Tensors are time-major, (2, T, B, ·), so that a step's rows are contiguous.
"""

import functools
from typing import Any, Callable, List, Optional, Tuple

import torch

from .precision import accumulation_dtype


def cell_forward(
    projected: torch.Tensor,
    recurrent_product: torch.Tensor,
    c: torch.Tensor,
    cell_clip: Optional[float],
    output_dtype: torch.dtype,
    tanh: Callable[[torch.Tensor], torch.Tensor] = torch.tanh,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, Optional[torch.Tensor], torch.Tensor]:
    """One step of the cell from its two products (2, n, 4C), gate order i, f, o, g, and the
    previous cell state c (2, n, C).

    RETURNS: the sigmoid gates (2, n, 3C), the candidate (2, n, C), the new cell state, where the
    cell clip left it alone (None without a clip), and the cell output o·tanh(c) in `output_dtype`.
    """
    dtype = c.dtype
    cell_dim = c.shape[-1]
    z = projected.to(dtype) + recurrent_product.to(dtype)
    sigmoid = torch.sigmoid(z[..., : 3 * cell_dim])
    candidate = tanh(z[..., 3 * cell_dim :])
    input_gate, forget_gate, output_gate = sigmoid.chunk(3, dim=-1)
    new_c = forget_gate * c + input_gate * candidate
    kept = None
    if cell_clip is not None:
        kept = new_c.abs() <= cell_clip
        new_c = new_c.clamp(-cell_clip, cell_clip)
    return sigmoid, candidate, new_c, kept, (tanh(new_c) * output_gate).to(output_dtype)


def cell_backward(
    sigmoid: torch.Tensor,
    candidate: torch.Tensor,
    cells: torch.Tensor,
    previous_cells: torch.Tensor,
    dc: torch.Tensor,
    dm: torch.Tensor,
    kept: Optional[torch.Tensor],
    output_dtype: torch.dtype,
    tanh: Callable[[torch.Tensor], torch.Tensor] = torch.tanh,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """The derivatives of one step, from its gradients of the cell state (dc, from later steps)
    and of the cell output o·tanh(c) (dm).

    RETURNS: the gradients of the gate pre-activations (2, n, 4C) in `output_dtype`, and of the
    previous cell state.
    """
    dtype = sigmoid.dtype
    input_gate, forget_gate, output_gate = sigmoid.chunk(3, dim=-1)
    dm = dm.to(dtype)
    tanh_c = tanh(cells)
    dc_step = dc + dm * output_gate * (1 - tanh_c * tanh_c)
    if kept is not None:
        dc_step = dc_step * kept
    dz = torch.cat(
        [
            dc_step * candidate * input_gate * (1 - input_gate),
            dc_step * previous_cells * forget_gate * (1 - forget_gate),
            dm * tanh_c * output_gate * (1 - output_gate),
            dc_step * input_gate * (1 - candidate * candidate),
        ],
        dim=-1,
    )
    return dz.to(output_dtype), dc_step * forget_gate


def _tanh_by_sigmoid(x: torch.Tensor) -> torch.Tensor:
    """tanh(x) = 2·sigmoid(2x) − 1: compiled on CPU, about twice as fast as compiled torch.tanh."""
    return 2 * torch.sigmoid(2 * x) - 1


@functools.lru_cache(maxsize=None)
def cell_functions(compiled: bool) -> Tuple[Callable[..., Any], Callable[..., Any]]:
    """(`cell_forward`, `cell_backward`), compiled into fused loops by `torch.compile` if asked
    (once per process; a new shape compiles again)."""
    if not compiled:
        return cell_forward, cell_backward
    return (
        torch.compile(functools.partial(cell_forward, tanh=_tanh_by_sigmoid), dynamic=False),
        torch.compile(functools.partial(cell_backward, tanh=_tanh_by_sigmoid), dynamic=False),
    )


class LstmLayerFunction(torch.autograd.Function):
    """h_seq, c_last, h_last = f(projected inputs, recurrent weight, projection, c0, h0).

    projected (Tensor): (2, T, B, 4C) input products x·W_x + b, gate order i, f, o, g.
    recurrent_weight (Tensor): (2, 4C, P).
    projection (Optional[Tensor]): (2, P, C), or None (then P = C).
    c0, h0 (Tensor): (2, B, C) and (2, B, P) initial state.
    active (List[int]): per step, the rows (a prefix: rows sorted by length) still running.
    cell_clip, proj_clip (Optional[float]): clipping of the cell state and the projected output.
    compute_dtype (torch.dtype): type of the matrix products; gates and states stay float32.
    compiled (bool): run the element-wise part of each step compiled (`cell_functions`).
    RETURNS: h_seq (2, T, B, P) with zeros past each row's length, and each row's last (c, h).
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx,
        projected: torch.Tensor,
        recurrent_weight: torch.Tensor,
        projection: Optional[torch.Tensor],
        c0: torch.Tensor,
        h0: torch.Tensor,
        active: List[int],
        cell_clip: Optional[float],
        proj_clip: Optional[float],
        compute_dtype: torch.dtype,
        compiled: bool = False,
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        ctx.device_type = projected.device.type
        ctx.compiled = compiled
        with torch.autocast(ctx.device_type, enabled=False):
            return _forward(ctx, projected, recurrent_weight, projection, c0, h0, active, cell_clip, proj_clip, compute_dtype)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_seq, grad_c, grad_h):  # type: ignore[no-untyped-def]
        with torch.autocast(ctx.device_type, enabled=False):
            return _backward(ctx, grad_seq, grad_c, grad_h)


def _forward(ctx, projected, recurrent_weight, projection, c0, h0, active, cell_clip, proj_clip, compute_dtype):  # type: ignore[no-untyped-def]
    n_dir, n_steps, batch_size, four_c = projected.shape
    dtype = accumulation_dtype(compute_dtype)
    step_forward = cell_functions(ctx.compiled)[0]
    # Positions past a row's length stay zero; where every row runs every step, all is written.
    new = torch.empty if min(active, default=0) == batch_size else torch.zeros
    out_dim = recurrent_weight.shape[2]
    h_seq = new(n_dir, n_steps, batch_size, out_dim, dtype=dtype, device=projected.device)
    h_kept = torch.ones_like(h_seq, dtype=torch.bool) if proj_clip is not None and projection is not None else None
    recurrent = recurrent_weight.to(compute_dtype).transpose(1, 2)
    proj_t = projection.to(compute_dtype).transpose(1, 2) if projection is not None else None
    # The cell outputs o·tanh(c) in the products' type where they feed the projection.
    output_dtype = compute_dtype if projection is not None else dtype
    c, h = c0.to(dtype, copy=True), h0.to(dtype, copy=True)
    steps = []  # per step: sigmoid gates, candidate, cell state, clip mask, cell output
    for t in range(n_steps):
        n = active[t]
        if n == 0:
            break
        step = step_forward(
            projected[:, t, :n], torch.bmm(h[:, :n].to(compute_dtype), recurrent), c[:, :n], cell_clip, output_dtype
        )
        steps.append(step)
        c[:, :n] = step[2]
        cell_output = step[4]
        if proj_t is not None:
            h_new = torch.bmm(cell_output, proj_t).to(dtype)
            if proj_clip is not None:
                torch.le(h_new.abs(), proj_clip, out=h_kept[:, t, :n])
                h_new.clamp_(-proj_clip, proj_clip)
        else:
            h_new = cell_output
        h[:, :n] = h_new
        h_seq[:, t, :n] = h_new
    ctx.save_for_backward(recurrent_weight, projection, c0, h0, h_seq, h_kept)
    ctx.steps = steps
    ctx.active = active
    ctx.compute_dtype = compute_dtype
    return h_seq, c, h


def _backward(ctx, grad_seq, grad_c, grad_h):  # type: ignore[no-untyped-def]
    recurrent_weight, projection, c0, h0, h_seq, h_kept = ctx.saved_tensors
    steps, active, compute_dtype = ctx.steps, ctx.active, ctx.compute_dtype
    step_backward = cell_functions(ctx.compiled)[1]
    n_dir, n_steps, batch_size, out_dim = h_seq.shape
    dtype = h_seq.dtype
    cell_dim = recurrent_weight.shape[1] // 4
    dh = grad_h.to(dtype, copy=True) if grad_h is not None else h0.new_zeros(h0.shape, dtype=dtype)
    dc = grad_c.to(dtype, copy=True) if grad_c is not None else c0.new_zeros(c0.shape, dtype=dtype)
    new = torch.empty if min(active, default=0) == batch_size else torch.zeros
    # The gradients of the gate pre-activations, in the products' type: they feed the
    # recurrent product, the weight gradients and the input products' gradient.
    d_gates = new(n_dir, n_steps, batch_size, 4 * cell_dim, dtype=compute_dtype, device=h_seq.device)
    d_out = new(h_seq.shape, dtype=dtype, device=h_seq.device) if projection is not None else None
    recurrent = recurrent_weight.to(compute_dtype)
    proj = projection.to(compute_dtype) if projection is not None else None
    first_cells = c0.to(dtype)
    for t in reversed(range(len(steps))):
        n = active[t]
        sigmoid, candidate, cells, kept, _ = steps[t]
        dh_t = dh[:, :n]
        if grad_seq is not None:
            dh_t = dh_t + grad_seq[:, t, :n]
        if proj is not None:
            if h_kept is not None:
                dh_t = dh_t * h_kept[:, t, :n]
            d_out[:, t, :n] = dh_t
            dm = torch.bmm(dh_t.to(compute_dtype), proj)
        else:
            dm = dh_t
        previous_cells = steps[t - 1][2][:, :n] if t > 0 else first_cells[:, :n]
        dz, dc[:, :n] = step_backward(sigmoid, candidate, cells, previous_cells, dc[:, :n], dm, kept, compute_dtype)
        d_gates[:, t, :n] = dz
        dh[:, :n] = torch.bmm(dz, recurrent)
    # Weight gradients: one product over all steps and rows (inactive positions are zero).
    h_prev = torch.cat([h0.to(dtype).unsqueeze(1), h_seq[:, :-1]], dim=1).to(compute_dtype)
    flat_gates = d_gates.view(n_dir, -1, 4 * cell_dim)
    grad_recurrent = torch.bmm(flat_gates.transpose(1, 2), h_prev.view(n_dir, -1, out_dim))
    grad_projection = None
    if projection is not None:
        outputs = h_seq.new_zeros(n_dir, n_steps, batch_size, cell_dim, dtype=compute_dtype)
        for t, step in enumerate(steps):
            outputs[:, t, : active[t]] = step[4]
        flat_d_out = d_out.view(n_dir, -1, out_dim).transpose(1, 2).to(compute_dtype)
        grad_projection = torch.bmm(flat_d_out, outputs.view(n_dir, -1, cell_dim)).to(projection.dtype)
    ctx.steps = None
    return (
        d_gates,
        grad_recurrent.to(recurrent_weight.dtype),
        grad_projection,
        dc.to(c0.dtype),
        dh.to(h0.dtype),
        None,
        None,
        None,
        None,
        None,
    )
