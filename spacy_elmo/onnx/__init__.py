"""ONNX export of the biLM and an ONNX Runtime runner (the `onnx` extra: onnx, onnxruntime).

`export_onnx` needs torch; `OnnxBiLM` and `quantize_onnx` do not. Names load lazily, so that
importing the runner does not import torch.
"""
from importlib import import_module
from typing import Any

__all__ = ["OnnxBiLM", "export_onnx", "layer_cosines", "quantize_onnx"]

_MODULES = {"OnnxBiLM": "runner", "export_onnx": "export", "layer_cosines": "quantization", "quantize_onnx": "quantization"}


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_MODULES[name]}", __name__), name)
