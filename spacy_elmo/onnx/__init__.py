"""ONNX export of the biLM and an ONNX Runtime runner (the `onnx` extra: onnx, onnxruntime).

`export_onnx` needs torch; `OnnxBiLM` and `quantize_onnx` do not. Names load lazily, so that
importing the runner does not import torch, and a missing dependency is one line naming its extra.
"""
from importlib import import_module
from typing import Any

from ..dependencies import require

__all__ = ["OnnxBiLM", "export_onnx", "layer_cosines", "quantize_onnx"]

_MODULES = {"OnnxBiLM": "runner", "export_onnx": "export", "layer_cosines": "quantization", "quantize_onnx": "quantization"}
# What each name needs beyond numpy.
_NEEDS = {"OnnxBiLM": ("onnxruntime",), "export_onnx": ("torch", "onnx"), "quantize_onnx": ("onnx", "onnxruntime")}


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for dependency in _NEEDS.get(name, ()):
        require(dependency, f"{__name__}.{name}")
    return getattr(import_module(f".{_MODULES[name]}", __name__), name)
