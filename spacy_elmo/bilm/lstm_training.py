"""One LSTM layer (both directions) over a whole window as a single autograd node.

Training runs the cell step by step; through autograd that is some twenty small nodes per step,
each with its own temporaries, and the weight gradients as one small product per step. Here the
forward pass runs the steps without autograd, keeping only the activated gates and cell states,
and the backward pass runs the steps in reverse by hand, then computes each weight gradient as
one large product over all steps. Same maths as the inference cell (TensorFlow LSTMCell with
projection and clipping); tests compare it with autograd through the step-by-step cell.

Tensors are time-major, (2, T, B, ·), so that a step's rows are contiguous.
"""

from typing import List, Optional, Tuple

import torch

from .precision import accumulation_dtype


class LstmLayerFunction(torch.autograd.Function):
    """h_seq, c_last, h_last = f(projected inputs, recurrent weight, projection, c0, h0).

    projected (Tensor): (2, T, B, 4C) input products x·W_x + b, gate order i, f, o, g.
    recurrent_weight (Tensor): (2, 4C, P).
    projection (Optional[Tensor]): (2, P, C), or None (then P = C).
    c0, h0 (Tensor): (2, B, C) and (2, B, P) initial state.
    active (List[int]): per step, the rows (a prefix: rows sorted by length) still running.
    cell_clip, proj_clip (Optional[float]): clipping of the cell state and the projected output.
    compute_dtype (torch.dtype): type of the matrix products; gates and states stay float32.
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
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        ctx.device_type = projected.device.type
        with torch.autocast(ctx.device_type, enabled=False):
            return _forward(ctx, projected, recurrent_weight, projection, c0, h0, active, cell_clip, proj_clip, compute_dtype)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_seq, grad_c, grad_h):  # type: ignore[no-untyped-def]
        with torch.autocast(ctx.device_type, enabled=False):
            return _backward(ctx, grad_seq, grad_c, grad_h)


def _forward(ctx, projected, recurrent_weight, projection, c0, h0, active, cell_clip, proj_clip, compute_dtype):  # type: ignore[no-untyped-def]
    n_dir, n_steps, batch_size, four_c = projected.shape
    cell_dim = four_c // 4
    dtype = accumulation_dtype(compute_dtype)
    # Positions past a row's length stay zero; where every row runs every step, all is written.
    new = torch.empty if min(active, default=0) == batch_size else torch.zeros
    out_dim = recurrent_weight.shape[2]
    gates = new(n_dir, n_steps, batch_size, four_c, dtype=dtype, device=projected.device)
    cells = new(n_dir, n_steps, batch_size, cell_dim, dtype=dtype, device=projected.device)
    h_seq = new(n_dir, n_steps, batch_size, out_dim, dtype=dtype, device=projected.device)
    cell_kept = torch.ones_like(cells, dtype=torch.bool) if cell_clip is not None else None
    h_kept = torch.ones_like(h_seq, dtype=torch.bool) if proj_clip is not None and projection is not None else None
    recurrent = recurrent_weight.to(compute_dtype).transpose(1, 2)
    proj_t = projection.to(compute_dtype).transpose(1, 2) if projection is not None else None
    c, h = c0.to(dtype, copy=True), h0.to(dtype, copy=True)
    for t in range(n_steps):
        n = active[t]
        if n == 0:
            break
        z = gates[:, t, :n]
        if compute_dtype == dtype:
            torch.baddbmm(projected[:, t, :n], h[:, :n], recurrent, out=z)
        else:
            torch.add(projected[:, t, :n].to(dtype), torch.bmm(h[:, :n].to(compute_dtype), recurrent), out=z)
        z[..., : 3 * cell_dim].sigmoid_()
        z[..., 3 * cell_dim :].tanh_()
        i, f, o, g = z.chunk(4, dim=-1)
        c_step = c[:, :n]
        c_step.mul_(f).addcmul_(i, g)
        if cell_clip is not None:
            torch.le(c_step.abs(), cell_clip, out=cell_kept[:, t, :n])
            c_step.clamp_(-cell_clip, cell_clip)
        cells[:, t, :n] = c_step
        m = torch.tanh(c_step).mul_(o)
        if proj_t is not None:
            h_new = torch.bmm(m.to(compute_dtype), proj_t).to(dtype)
            if proj_clip is not None:
                torch.le(h_new.abs(), proj_clip, out=h_kept[:, t, :n])
                h_new.clamp_(-proj_clip, proj_clip)
        else:
            h_new = m
        h[:, :n] = h_new
        h_seq[:, t, :n] = h_new
    ctx.save_for_backward(recurrent_weight, projection, c0, h0, gates, cells, h_seq, cell_kept, h_kept)
    ctx.active = active
    ctx.compute_dtype = compute_dtype
    return h_seq, c, h


def _backward(ctx, grad_seq, grad_c, grad_h):  # type: ignore[no-untyped-def]
    recurrent_weight, projection, c0, h0, gates, cells, h_seq, cell_kept, h_kept = ctx.saved_tensors
    active, compute_dtype = ctx.active, ctx.compute_dtype
    n_dir, n_steps, batch_size, four_c = gates.shape
    cell_dim = four_c // 4
    dtype = gates.dtype
    dh = grad_h.to(dtype, copy=True) if grad_h is not None else h0.new_zeros(h0.shape, dtype=dtype)
    dc = grad_c.to(dtype, copy=True) if grad_c is not None else c0.new_zeros(c0.shape, dtype=dtype)
    new = torch.empty_like if min(active, default=0) == batch_size else torch.zeros_like
    d_gates = new(gates)
    d_out = new(h_seq) if projection is not None else None
    recurrent = recurrent_weight.to(compute_dtype)
    proj = projection.to(compute_dtype) if projection is not None else None
    for t in reversed(range(n_steps)):
        n = active[t]
        if n == 0:
            continue
        dh_t = dh[:, :n]
        if grad_seq is not None:
            dh_t = dh_t + grad_seq[:, t, :n]
        if proj is not None:
            if h_kept is not None:
                dh_t = dh_t * h_kept[:, t, :n]
            d_out[:, t, :n] = dh_t
            dm = torch.bmm(dh_t.to(compute_dtype), proj).to(dtype)
        else:
            dm = dh_t
        i, f, o, g = gates[:, t, :n].chunk(4, dim=-1)
        tanh_c = torch.tanh(cells[:, t, :n])
        dc_t = dc[:, :n] + dm * o * (1 - tanh_c * tanh_c)
        if cell_kept is not None:
            dc_t.mul_(cell_kept[:, t, :n])
        c_prev = cells[:, t - 1, :n] if t > 0 else c0[:, :n].to(dtype)
        dz = d_gates[:, t, :n]
        di, df, do, dg = dz.chunk(4, dim=-1)
        torch.mul(dc_t, g, out=di).mul_(i * (1 - i))
        torch.mul(dc_t, c_prev, out=df).mul_(f * (1 - f))
        torch.mul(dm, tanh_c, out=do).mul_(o * (1 - o))
        torch.mul(dc_t, i, out=dg).mul_(1 - g * g)
        dc[:, :n] = dc_t * f
        dh[:, :n] = torch.bmm(dz.to(compute_dtype), recurrent).to(dtype)
    # Weight gradients: one product over all steps and rows (inactive positions are zero).
    h_prev = torch.cat([h0.to(dtype).unsqueeze(1), h_seq[:, :-1]], dim=1)
    flat_gates = d_gates.view(n_dir, -1, four_c).to(compute_dtype)
    grad_recurrent = torch.bmm(flat_gates.transpose(1, 2), h_prev.view(n_dir, -1, h_prev.shape[-1]).to(compute_dtype))
    grad_projection = None
    if projection is not None:
        o_all = gates[..., 2 * cell_dim : 3 * cell_dim]
        m_all = torch.tanh(cells).mul_(o_all).view(n_dir, -1, cell_dim)
        grad_projection = torch.bmm(d_out.view(n_dir, -1, d_out.shape[-1]).transpose(1, 2).to(compute_dtype), m_all.to(compute_dtype))
        grad_projection = grad_projection.to(projection.dtype)
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
    )
