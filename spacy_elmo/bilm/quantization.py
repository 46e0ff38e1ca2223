"""int8 inference on the CPU, with PyTorch's own quantized kernels (no extra dependency).

`quantize_int8(bilm)` quantizes the weights of the products that dominate the biLM's time once,
symmetric per output channel (±127), and prepacks them for
`torch.ops.quantized.linear_dynamic`, which quantizes each product's input on the fly (one scale
per call) and returns float32: the character CNN (as windows × filters products), the highway
layers, the token projection, and the LSTMs' input, recurrent and projection products. The rest
(character embeddings, max-pooling, gates, cell states, clipping, skip connections) stays
float32, and so do the outputs.

The engine is oneDNN where the CPU has int8 dot-product instructions (AVX512-VNNI, AVX-VNNI or
AMX), with 8-bit activations; else fbgemm (PyTorch's "x86" engine) with 7-bit activations,
which keeps its int16 accumulation from saturating on CPUs without VNNI. CUDA, MPS and torch
builds without an x86 quantized engine are refused, naming the fallback.

A quantized biLM is for inference: it has no gradients. Its `state_dict()` holds the
dequantized weights under the float names, so it saves (and a pipeline serializes) like a
float32 model whose weights are exactly the int8 ones.
"""
import contextlib
import warnings
from typing import Any, Iterator, List, Optional, Tuple, Union

import torch
from torch import nn

from ..cpu_flags import warn_if_bfloat16_is_emulated
from ..errors import ConfigError
from .lstm import BiLstmLayer

INT8 = "int8"
# PyTorch's quantized CPU engines that run per-channel dynamic linear products on x86.
X86_ENGINES = ("onednn", "x86", "fbgemm")
FALLBACK = "use dtype float32 (or bfloat16 where the CPU multiplies it natively)"


class Int8Unsupported(ConfigError):
    """int8 was asked for where it cannot run."""


def cpu_has_vnni() -> bool:
    """Whether the CPU has int8 dot-product instructions (AVX512-VNNI / AVX-VNNI, or AMX)."""
    checks = ("_is_vnni_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)


def int8_engine(supported: Optional[List[str]] = None, vnni: Optional[bool] = None) -> Tuple[str, bool]:
    """The quantized engine int8 uses here and whether it reduces activations to 7 bits.

    supported: the engines of this torch build (default: `torch.backends.quantized.supported_engines`).
    vnni: whether the CPU has VNNI or AMX (default: asked of torch).
    """
    engines = list(torch.backends.quantized.supported_engines if supported is None else supported)
    vnni = cpu_has_vnni() if vnni is None else vnni
    if vnni and "onednn" in engines:
        return "onednn", False
    for engine in ("x86", "fbgemm", "onednn"):
        if engine in engines:
            return engine, True
    raise Int8Unsupported(
        f"dtype int8 needs one of PyTorch's x86 quantized CPU engines ({', '.join(X86_ENGINES)}); "
        f"this torch build has {', '.join(e for e in engines if e != 'none') or 'none'}: {FALLBACK}"
    )


def check_int8(device: Union[str, torch.device]) -> Tuple[str, bool]:
    """Refuse int8 where it cannot run; else the engine and activation range (`int8_engine`)."""
    device = torch.device(device)
    if device.type != "cpu":
        raise Int8Unsupported(
            f"dtype int8 runs on the CPU only (PyTorch's quantized CPU kernels), not on {device}: "
            f"use dtype bfloat16 or float32 on {device.type}, or device cpu for int8"
        )
    return int8_engine()


def to_compute_dtype(bilm: Any, device: Union[str, torch.device], dtype: str) -> Any:
    """`bilm` on `device` computing in `dtype` ("float32", "bfloat16" or "int8"), in eval mode;
    bfloat16 on a CPU that only emulates it warns, naming the faster choices."""
    if dtype == INT8:
        check_int8(device)
        return quantize_int8(bilm.to(device=torch.device(device), dtype=torch.float32)).eval()
    if dtype == "bfloat16" and torch.device(device).type == "cpu":
        warn_if_bfloat16_is_emulated()
    return bilm.to(device=device, dtype=getattr(torch, dtype)).eval()


def is_int8(bilm: nn.Module) -> bool:
    """Whether `bilm` (or any module) has int8 products."""
    return any(isinstance(m, (Int8Linear, Int8Conv1d, Int8BiLstmLayer)) for m in bilm.modules())


def quantize_int8(bilm: Any) -> Any:
    """Quantize a float32 CPU biLM in place (see the module's docstring) and return it.

    Its weights no longer take gradients; the float weights of the quantized products are freed.
    """
    if is_int8(bilm):
        return bilm
    if bilm.device.type != "cpu" or bilm.dtype != torch.float32:
        raise Int8Unsupported(f"int8 quantizes a float32 biLM on the CPU, not {bilm.dtype} on {bilm.device}")
    engine, reduce_range = check_int8(bilm.device)
    with _engine(engine), torch.no_grad():
        encoder = bilm.token_encoder
        encoder.convolutions = nn.ModuleList(Int8Conv1d(conv, reduce_range) for conv in encoder.convolutions)
        for highway in encoder.highways:
            highway.linear = Int8Linear(highway.linear, reduce_range)
        if encoder.projection is not None:
            encoder.projection = Int8Linear(encoder.projection, reduce_range)
        bilm.lstm.layers = nn.ModuleList(Int8BiLstmLayer(layer, reduce_range) for layer in bilm.lstm.layers)
    bilm.requires_grad_(False)
    bilm.token_cache.clear()
    bilm.reset_states()
    bilm._primed = None
    return bilm


@contextlib.contextmanager
def _engine(name: str) -> Iterator[None]:
    """Prepack with `name` (the packed weights keep their engine; products follow them)."""
    before = torch.backends.quantized.engine
    torch.backends.quantized.engine = name
    try:
        yield
    finally:
        torch.backends.quantized.engine = before


def _pack(weight: torch.Tensor, bias: Optional[torch.Tensor]) -> Any:
    """Quantize a (out, in) weight symmetric per output channel (scale max|w| / 127, so the
    range is ±127 and quantizing the dequantized weights again gives the same ones) and prepack
    it with its bias."""
    weight = weight.detach().float().contiguous()
    scale = (weight.abs().amax(dim=1) / 127.0).clamp_min(torch.finfo(torch.float32).tiny).to(torch.float64)
    zero_point = torch.zeros(weight.shape[0], dtype=torch.int64)
    with warnings.catch_warnings():
        # torch 2.13 marks its quantized tensor constructors deprecated (docs/performance.md)
        warnings.simplefilter("ignore", UserWarning)
        quantized = torch.quantize_per_channel(weight, scale, zero_point, 0, torch.qint8)
        return torch.ops.quantized.linear_prepack(quantized, None if bias is None else bias.detach().float().contiguous())


def _unpacked_weight(packed: Any) -> torch.Tensor:
    """The float32 weight (dequantized) of a prepacked product."""
    return torch.ops.quantized.linear_unpack(packed)[0].dequantize()


def _product(x: torch.Tensor, packed: Any, reduce_range: bool) -> torch.Tensor:
    """x·Wᵀ (+ b) in int8, x quantized per call; x (..., in) float32 -> (..., out) float32."""
    return torch.ops.quantized.linear_dynamic(x.contiguous(), packed, reduce_range)


class Int8Linear(nn.Module):
    """`nn.Linear` with an int8 product (weight per channel, input per call)."""

    def __init__(self, linear: nn.Linear, reduce_range: bool) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.reduce_range = reduce_range
        self._packed = _pack(linear.weight, linear.bias)
        self._has_bias = linear.bias is not None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _product(x, self._packed, self.reduce_range)

    def _save_to_state_dict(self, destination, prefix, keep_vars):  # type: ignore[no-untyped-def]
        weight, bias = torch.ops.quantized.linear_unpack(self._packed)
        destination[prefix + "weight"] = weight.dequantize()
        if self._has_bias:
            destination[prefix + "bias"] = bias


class Int8Conv1d(nn.Module):
    """A `nn.Conv1d` (stride 1, no padding) as one int8 product of every window with the filters.

    Takes (N, E, M) and returns (N, filters, M - width + 1), as the convolution.
    """

    def __init__(self, conv: nn.Conv1d, reduce_range: bool) -> None:
        super().__init__()
        if conv.stride != (1,) or conv.padding != (0,) or conv.dilation != (1,) or conv.groups != 1:
            raise Int8Unsupported("int8 quantizes character convolutions of stride 1 without padding only")
        self.out_channels, self.in_channels, self.width = conv.weight.shape
        self.reduce_range = reduce_range
        # Weight (F, E, w) flattened as the windows below: (E, w) per filter.
        self._packed = _pack(conv.weight.reshape(self.out_channels, -1), conv.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, width, steps = x.shape[0], self.width, x.shape[2] - self.width + 1
        windows = x.unfold(2, width, 1).transpose(1, 2).reshape(n * steps, -1)  # (N·L, E·w)
        return _product(windows, self._packed, self.reduce_range).view(n, steps, -1).transpose(1, 2)

    def _save_to_state_dict(self, destination, prefix, keep_vars):  # type: ignore[no-untyped-def]
        weight, bias = torch.ops.quantized.linear_unpack(self._packed)
        destination[prefix + "weight"] = weight.dequantize().view(self.out_channels, self.in_channels, self.width)
        destination[prefix + "bias"] = bias


class Int8BiLstmLayer(BiLstmLayer):
    """A `BiLstmLayer` whose input, recurrent and projection products run in int8, one prepacked
    weight per direction; the bias stays float32 (added inside the input product)."""

    quantized = True

    def __init__(self, layer: BiLstmLayer, reduce_range: bool) -> None:
        nn.Module.__init__(self)
        self.cell_dim, self.output_dim = layer.cell_dim, layer.output_dim
        self.reduce_range = reduce_range
        self.bias = nn.Parameter(layer.bias.detach().clone(), requires_grad=False)
        self.input_weight = self.recurrent_weight = self.projection = None
        self._input = [_pack(layer.input_weight[d], layer.bias[d]) for d in range(2)]
        self._recurrent = [_pack(layer.recurrent_weight[d], None) for d in range(2)]
        self._projection = [_pack(layer.projection[d], None) for d in range(2)] if layer.projection is not None else None

    @property
    def has_projection(self) -> bool:
        return self._projection is not None

    def reset_parameters(self) -> None:
        raise Int8Unsupported("an int8 biLM cannot be re-initialised; load it in float32")

    def input_products(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        # One tensor per direction: stacking them would copy the largest activations.
        return (_product(x[0], self._input[0], self.reduce_range), _product(x[1], self._input[1], self.reduce_range))

    def gather_rows(self, projected: Any, rows: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return (projected[0][rows[0]], projected[1][rows[1]])

    def step_products(self, projected: Any, n: int, step: int, h: torch.Tensor) -> torch.Tensor:
        z = torch.empty(2, n, projected[0].shape[-1], dtype=h.dtype, device=h.device)
        for d in range(2):
            torch.add(projected[d][:n, step], _product(h[d], self._recurrent[d], self.reduce_range), out=z[d])
        return z

    def project(self, m: torch.Tensor) -> torch.Tensor:
        assert self._projection is not None
        return torch.stack([_product(m[d], self._projection[d], self.reduce_range) for d in range(2)])

    def _save_to_state_dict(self, destination, prefix, keep_vars):  # type: ignore[no-untyped-def]
        destination[prefix + "input_weight"] = torch.stack([_unpacked_weight(p) for p in self._input])
        destination[prefix + "recurrent_weight"] = torch.stack([_unpacked_weight(p) for p in self._recurrent])
        destination[prefix + "bias"] = self.bias.detach()
        if self._projection is not None:
            destination[prefix + "projection"] = torch.stack([_unpacked_weight(p) for p in self._projection])
