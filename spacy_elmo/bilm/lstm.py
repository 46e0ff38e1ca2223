"""Forward and backward stacks of LSTMs with projection and clipping (TensorFlow LSTMCell semantics).

Both directions run in one batched computation: every tensor has a leading direction axis of
size 2 (0 = forward LM, 1 = backward LM). Each direction reads its own input sequence from left
to right; the caller reverses the backward input. Gate order of the weights: i, f, o, g (the
three sigmoid gates, then the cell candidate); the forget bias includes TensorFlow's +1.
"""
from typing import Callable, List, Optional, Tuple, Union

import torch
from torch import nn
from torch.nn import functional as F

from .architecture import BiLMArchitecture
from .lstm_training import LstmLayerFunction
from .precision import product_dtype

LayerState = Tuple[torch.Tensor, torch.Tensor]  # c (2, B, C), h (2, B, P)
# Input products: (2, ..., 4C), or (int8) one tensor (..., 4C) per direction.
Projected = Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]
# Bytes of input projection (x·W_x for a block of time steps) held at once: bounds memory
# for long sequences and big batches; large enough for an efficient matrix product.
INPUT_CHUNK_BYTES = 64 * 2**20


class BiLstmLayer(nn.Module):
    """One LSTM layer for each direction, weights stacked on a leading axis of size 2.

    The inference pass reaches the weights only through `input_products`, `gather_rows`,
    `step_products` and `project`, so that a quantized layer (`quantization.Int8BiLstmLayer`,
    whose input products are a pair of per-direction tensors) can replace them.
    """

    # Whether the products run in int8 (inference only, no gradients).
    quantized = False

    def __init__(self, input_dim: int, cell_dim: int, output_dim: int, project: bool) -> None:
        super().__init__()
        self.cell_dim = cell_dim
        self.output_dim = output_dim
        self.input_weight = nn.Parameter(torch.empty(2, 4 * cell_dim, input_dim))
        self.recurrent_weight = nn.Parameter(torch.empty(2, 4 * cell_dim, output_dim))
        self.bias = nn.Parameter(torch.empty(2, 4 * cell_dim))
        self.projection = nn.Parameter(torch.empty(2, output_dim, cell_dim)) if project else None

    def reset_parameters(self) -> None:
        """Glorot-uniform kernels as TensorFlow, zero bias plus the forget bias of 1."""
        with torch.no_grad():
            for d in range(2):
                fan = self.input_weight.shape[2] + self.recurrent_weight.shape[2]
                bound = (6.0 / (fan + 4 * self.cell_dim)) ** 0.5
                nn.init.uniform_(self.input_weight[d], -bound, bound)
                nn.init.uniform_(self.recurrent_weight[d], -bound, bound)
                if self.projection is not None:
                    bound = (6.0 / (self.cell_dim + self.output_dim)) ** 0.5
                    nn.init.uniform_(self.projection[d], -bound, bound)
            self.bias.zero_()
            self.bias[:, self.cell_dim : 2 * self.cell_dim] = 1.0

    @property
    def has_projection(self) -> bool:
        return self.projection is not None

    def input_products(self, x: torch.Tensor) -> Projected:
        """x·W_x + b per direction: (2, ..., I) -> (2, ..., 4C)."""
        flat = x.reshape(x.shape[0], -1, x.shape[-1])
        projected = torch.baddbmm(self.bias.unsqueeze(1), flat, self.input_weight.transpose(1, 2))
        return projected.view(*x.shape[:-1], -1)

    def gather_rows(self, projected: Projected, rows: torch.Tensor) -> Projected:
        """Per direction, the rows (2, B, T) of input products (2, U, 4C): (2, B, T, 4C)."""
        direction = torch.arange(2, device=rows.device).view(2, 1, 1)
        return projected[direction, rows]  # type: ignore[index]

    def step_products(self, projected: Projected, n: int, step: int, h: torch.Tensor) -> torch.Tensor:
        """The pre-activations of one step of the first `n` rows, projected[:, :n, step] + h·W_h,
        from input products (2, B, T, 4C) and h (2, n, P): (2, n, 4C)."""
        return torch.baddbmm(projected[:, :n, step], h, self.recurrent_weight.transpose(1, 2))  # type: ignore[call-overload]

    def project(self, m: torch.Tensor) -> torch.Tensor:
        """The output projection, (2, n, C) -> (2, n, P)."""
        assert self.projection is not None
        return torch.bmm(m, self.projection.transpose(1, 2))


class BiLstmStack(nn.Module):
    """L layers of forward and backward LSTMs (the contextual part of the biLM)."""

    def __init__(self, config: BiLMArchitecture) -> None:
        super().__init__()
        self.config = config
        # Training only: run each step's element-wise part compiled (see lstm_training).
        self.compiled_cells = False
        width = config.projection_dim if config.has_lstm_projection else config.lstm_dim
        self.layers = nn.ModuleList(
            BiLstmLayer(width, config.lstm_dim, width, config.has_lstm_projection)
            for _ in range(config.n_layers)
        )

    def reset_parameters(self) -> None:
        for layer in self.layers:
            layer.reset_parameters()

    def zero_state(self, batch_size: int, device: torch.device, dtype: torch.dtype) -> List[LayerState]:
        """All-zero (c, h) for every layer."""
        return [
            (
                torch.zeros(2, batch_size, layer.cell_dim, device=device, dtype=dtype),
                torch.zeros(2, batch_size, layer.output_dim, device=device, dtype=dtype),
            )
            for layer in self.layers
        ]

    def forward(
        self,
        inputs: torch.Tensor,
        lengths: torch.Tensor,
        state: Optional[List[LayerState]] = None,
        dropout: float = 0.0,
        token_ids: Optional[torch.Tensor] = None,
    ) -> Tuple[List[torch.Tensor], List[LayerState]]:
        """Run both directions over their inputs.

        inputs (Tensor): (2, B, T, P), direction-major; positions at or past a row's length are
            ignored. With `token_ids`, a table (U, P) of distinct token vectors instead.
        lengths (Tensor): (B,) int64 valid lengths, on any device.
        state (Optional[List[LayerState]]): initial (c, h) per layer, zeros if None.
        dropout (float): dropout on each layer's input, in training mode only.
        token_ids (Optional[Tensor]): (2, B, T) rows of the `inputs` table; the first layer's input
            products are then computed once per distinct token where that pays off.
        RETURNS (Tuple[List[Tensor], List[LayerState]]): outputs (2, B, T, P) per layer, with
            skip connections added and zeros past each length; final state at each row's last step.
        """
        if token_ids is not None and not self._worth_a_table(inputs, token_ids, dropout):
            inputs, token_ids = inputs[token_ids], None
        batch_size, n_steps = (token_ids if token_ids is not None else inputs).shape[1:3]
        lengths = lengths.to("cpu", torch.int64)
        if state is None:
            state = self.zero_state(batch_size, inputs.device, inputs.dtype)
        order = torch.argsort(lengths, descending=True, stable=True)
        sorted_rows = bool((order == torch.arange(batch_size)).all())
        if not sorted_rows:
            if token_ids is not None:
                token_ids = token_ids[:, order.to(token_ids.device)]
            else:
                inputs = inputs[:, order.to(inputs.device)]
            state = [(c[:, order.to(c.device)], h[:, order.to(h.device)]) for c, h in state]
            lengths = lengths[order]
        # active[t]: rows (a prefix, rows being sorted) whose sequence covers step t
        active = (lengths.unsqueeze(0) > torch.arange(n_steps).unsqueeze(1)).sum(dim=1).tolist()
        outputs: List[torch.Tensor] = []
        new_state: List[LayerState] = []
        x = inputs
        for index, layer in enumerate(self.layers):
            if dropout > 0.0 and self.training:
                x = F.dropout(x, dropout, training=True)
            if torch.is_grad_enabled() and not layer.quantized:
                h_seq, layer_state = self._run_layer_differentiable(layer, x, active, state[index])
            else:
                if index == 0 and token_ids is not None:
                    project = self._table_projector(layer, x, token_ids)
                else:
                    project = self._dense_projector(layer, x)
                h_seq, layer_state = self._run_layer_inference(
                    layer, project, (batch_size, n_steps), active, state[index]
                )
            if index > 0 and self.config.use_skip_connections:
                h_seq = h_seq + x
            outputs.append(h_seq)
            new_state.append(layer_state)
            x = h_seq
        if not sorted_rows:
            inverse = torch.argsort(order)
            outputs = [out[:, inverse.to(out.device)] for out in outputs]
            new_state = [(c[:, inverse.to(c.device)], h[:, inverse.to(h.device)]) for c, h in new_state]
        return outputs, new_state

    def _worth_a_table(self, table: torch.Tensor, token_ids: torch.Tensor, dropout: float) -> bool:
        """Project distinct tokens only where that is exact, saves work and fits the memory bound."""
        if torch.is_grad_enabled() or (dropout > 0.0 and self.training):
            return False
        n_distinct, n_positions = table.shape[0], token_ids[0].numel()
        table_bytes = n_distinct * 2 * 4 * self.layers[0].cell_dim * table.element_size()
        return n_distinct < 0.8 * n_positions and table_bytes <= INPUT_CHUNK_BYTES

    def _dense_projector(self, layer: BiLstmLayer, x: torch.Tensor) -> Callable[[int, int, int], Projected]:
        def project(n_rows: int, start: int, stop: int) -> Projected:
            return layer.input_products(x[:, :n_rows, start:stop])  # (2, B, T, I) -> (2, B, T, 4C)

        return project

    def _table_projector(
        self, layer: BiLstmLayer, table: torch.Tensor, token_ids: torch.Tensor
    ) -> Callable[[int, int, int], Projected]:
        projected = layer.input_products(table.unsqueeze(0).expand(2, -1, -1))

        def project(n_rows: int, start: int, stop: int) -> Projected:
            return layer.gather_rows(projected, token_ids[:, :n_rows, start:stop])

        return project

    def _cell_in_place(self, layer: BiLstmLayer, z: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """One inference step of the cell from pre-activations z (2, n, 4C): overwrites z and updates
        the cell state view c in place; returns h."""
        cell_dim = layer.cell_dim
        gates = z[..., : 3 * cell_dim].sigmoid_()
        candidate = z[..., 3 * cell_dim :].tanh_()
        input_gate, forget_gate, output_gate = gates.chunk(3, dim=-1)
        c.mul_(forget_gate).addcmul_(input_gate, candidate)
        if self.config.cell_clip is not None:
            c.clamp_(-self.config.cell_clip, self.config.cell_clip)
        h = torch.tanh(c).mul_(output_gate)
        if layer.has_projection:
            h = layer.project(h)
            if self.config.proj_clip is not None:
                h.clamp_(-self.config.proj_clip, self.config.proj_clip)
        return h

    def _run_layer_inference(
        self,
        layer: BiLstmLayer,
        project: Callable[[int, int, int], Projected],
        shape: Tuple[int, int],
        active: List[int],
        state: LayerState,
    ) -> Tuple[torch.Tensor, LayerState]:
        batch_size, n_steps = shape
        c, h = state[0].clone(), state[1].clone()
        out = c.new_zeros(2, batch_size, n_steps, layer.output_dim)
        row_bytes = 2 * 4 * layer.cell_dim * c.element_size()
        chunk = max(1, INPUT_CHUNK_BYTES // (row_bytes * max(batch_size, 1)))
        for start in range(0, n_steps, chunk):
            stop = min(n_steps, start + chunk)
            if active[start] == 0:
                break
            projected = project(active[start], start, stop)
            for t in range(start, stop):
                n = active[t]
                if n == 0:
                    break
                z = layer.step_products(projected, n, t - start, h[:, :n])
                h_new = self._cell_in_place(layer, z, c[:, :n])
                h[:, :n] = h_new
                out[:, :n, t] = h_new
        return out, (c, h)

    def _run_layer_differentiable(
        self, layer: BiLstmLayer, x: torch.Tensor, active: List[int], state: LayerState
    ) -> Tuple[torch.Tensor, LayerState]:
        """The layer as one autograd node (`LstmLayerFunction`); outputs (2, B, T, P) are a
        view of time-major storage, which the next layer reads without a copy."""
        n_dir, batch_size, n_steps, width = x.shape
        time_major = x.transpose(1, 2).reshape(n_dir, n_steps * batch_size, width)
        compute_dtype = product_dtype(x.device.type, x.dtype)
        weight = layer.input_weight.to(compute_dtype).transpose(1, 2)
        projected = torch.baddbmm(layer.bias.unsqueeze(1), time_major.to(compute_dtype), weight)
        projected = projected.view(n_dir, n_steps, batch_size, -1)
        c, h = state
        h_seq, c, h = LstmLayerFunction.apply(
            projected,
            layer.recurrent_weight,
            layer.projection,
            c,
            h,
            active,
            self.config.cell_clip,
            self.config.proj_clip if layer.projection is not None else None,
            compute_dtype,
            self.compiled_cells,
        )
        return h_seq.transpose(1, 2), (c, h)
