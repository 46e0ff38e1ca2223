"""The biLM's LSTM layers re-expressed for ONNX export: one scripted loop over time steps, which
`torch.onnx.export` turns into an ONNX Loop, so the graph takes any number of tokens.

The cell is TensorFlow's LSTMCell with projection and clipping, as bilm-tf trains it (Peters et
al. 2018, allenai/bilm-tf): gates i, f, o then the candidate g; c ← f⊙c + i⊙g clipped to
±cell_clip; h ← tanh(c)⊙o projected to P, clipped to ±proj_clip. The same computation as
`spacy_elmo.bilm.lstm.BiLstmStack` in inference.
"""
import math
import warnings
from typing import List, Optional

import torch
from torch import Tensor, nn

from ..bilm.lstm import BiLstmLayer, LayerState


def _lstm_steps(
    products: Tensor,
    active: Tensor,
    recurrent: Tensor,
    projection: Tensor,
    c: Tensor,
    h: Tensor,
    cell_clip: float,
    proj_clip: float,
    project: bool,
) -> Tensor:
    """Run one direction over its packed input products, computing only the rows still active.

    products (Tensor): (N, 4C) x·W_x + b of every valid slot, time-major: step 0's rows, then
        step 1's, ... (N = active.sum()).
    active (Tensor): (T,) int64 how many rows each step has, non-increasing: the rows are ordered
        longest first, so step t's are the first active[t], and a row's state is dropped once it
        has finished.
    recurrent (Tensor): (P, 4C) W_hᵀ; projection (Tensor): (C, P), read if `project`.
    c, h (Tensor): the initial state of the rows, (B, C) and (B, P), B ≥ active[0].
    cell_clip, proj_clip (float): the clipping bounds (inf: none).
    RETURNS (Tensor): (N, P) the output of each valid slot, packed as `products`.
    """
    outputs: List[Tensor] = []
    start = 0
    for t in range(active.shape[0]):
        k = int(active[t])
        c, h = c[:k], h[:k]
        z = products[start : start + k] + torch.matmul(h, recurrent)
        input_gate, forget_gate, output_gate, candidate = z.chunk(4, dim=-1)
        c = torch.sigmoid(forget_gate) * c + torch.sigmoid(input_gate) * torch.tanh(candidate)
        c = c.clamp(-cell_clip, cell_clip)
        h = torch.tanh(c) * torch.sigmoid(output_gate)
        if project:
            h = torch.matmul(h, projection).clamp(-proj_clip, proj_clip)
        outputs.append(h)
        start += k
    return torch.cat(outputs)


with warnings.catch_warnings():
    # torch 2.13 marks scripting deprecated; the TorchScript-based exporter needs it to write
    # the loop as an ONNX Loop over a dynamic number of steps.
    warnings.simplefilter("ignore", DeprecationWarning)
    lstm_steps = torch.jit.script(_lstm_steps)


class ExportLstm(nn.Module):
    """One direction of one layer, started from a fixed state (the stateless biLM's state after
    its sentence marker), on packed inputs: the rows ordered longest first, each step computing
    only the rows whose sentences it has not passed.

    Each direction has its own 2-D weights, so that ONNX Runtime's quantization can quantize
    them per output channel.

    layer (BiLstmLayer): the layer of both directions.
    direction (int): 0 for the forward LM, 1 for the backward LM.
    start (LayerState): the initial (c, h) of both directions, (2, 1, C) and (2, 1, P).
    """

    def __init__(
        self,
        layer: BiLstmLayer,
        direction: int,
        start: LayerState,
        cell_clip: Optional[float],
        proj_clip: Optional[float],
    ) -> None:
        super().__init__()
        weights = {name: tensor.detach()[direction] for name, tensor in layer.named_parameters()}
        self.project = "projection" in weights
        self.register_buffer("input_weight", weights["input_weight"].t().contiguous())
        self.register_buffer("bias", weights["bias"].clone())
        self.register_buffer("recurrent", weights["recurrent_weight"].t().contiguous())
        self.register_buffer("projection", weights["projection"].t().contiguous() if self.project else torch.empty(0))
        self.register_buffer("start_c", start[0].detach()[direction].clone())  # (1, C)
        self.register_buffer("start_h", start[1].detach()[direction].clone())  # (1, P)
        self.cell_clip = math.inf if cell_clip is None else float(cell_clip)
        self.proj_clip = math.inf if proj_clip is None else float(proj_clip)

    def input_products(self, x: Tensor) -> Tensor:
        """(N, I) inputs to their (N, 4C) products x·W_x + b (one Gemm in ONNX Runtime)."""
        return torch.matmul(x, self.input_weight) + self.bias

    def forward(self, products: Tensor, active: Tensor, batch: int) -> Tensor:
        """(N, 4C) packed input products (`_lstm_steps`) of `batch` rows, with (T,) `active`
        rows a step, to their (N, P) packed outputs."""
        c = self.start_c.expand(batch, -1)
        h = self.start_h.expand(batch, -1)
        return lstm_steps(products, active, self.recurrent, self.projection, c, h, self.cell_clip, self.proj_clip, self.project)
