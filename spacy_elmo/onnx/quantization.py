"""int8 ONNX models (ONNX Runtime's dynamic quantization) and how close their layers stay."""
import logging
from pathlib import Path
from typing import List, Sequence

import numpy as np

from ..dependencies import require
from ..paths import PathLike

_INT64 = 7  # onnx.TensorProto.INT64 (onnx is imported only to quantize)


def quantize_onnx(source: PathLike, target: PathLike) -> Path:
    """Write an int8 copy of an exported biLM: the weights of its character convolutions and
    matrix products (the LSTMs' recurrent and projection products inside their loops too) as
    signed 8-bit integers per output channel, each product's input quantized per call (so a
    sentence's vectors depend a little on its batch). Character embeddings, max-pooling,
    gates, cell states, clipping and the outputs stay float32.

    source (PathLike): a float32 model written by `export_onnx`.
    target (PathLike): the int8 .onnx file to write (overwritten).
    RETURNS (Path): the path written.
    """
    for dependency in ("onnx", "onnxruntime"):
        require(dependency, "int8 ONNX quantization")
    from onnxruntime.quantization import QuantType, quantize_dynamic

    noise = _QuantizerNoise()
    logging.getLogger().addFilter(noise)
    try:
        quantize_dynamic(
            str(source),
            str(target),
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"EnableSubgraph": True},  # the products inside the LSTM loops too
        )
    finally:
        logging.getLogger().removeFilter(noise)
    return Path(target)


def layer_cosines(reference: Sequence[np.ndarray], other: Sequence[np.ndarray]) -> List[float]:
    """Per layer, the mean cosine similarity of two embeddings' token vectors.

    reference, other (Sequence[np.ndarray]): per sentence (n_layers, n_tokens, width) arrays.
    RETURNS (List[float]): one mean cosine per layer.
    """
    a = np.concatenate([x.astype(np.float64) for x in reference], axis=1)
    b = np.concatenate([x.astype(np.float64) for x in other], axis=1)
    norms = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    cosines = (a * b).sum(axis=-1) / np.maximum(norms, np.finfo(np.float64).tiny)
    return cosines.mean(axis=1).tolist()


class _QuantizerNoise(logging.Filter):
    """Drop ONNX Runtime's advice to pre-process the model (its symbolic shape inference fails on
    the outputs of the graph's loops, and the quantization finds every product without it) and its
    notes that the int64 inputs of the graph's index gathers are not float (nothing to quantize)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        integer_gather = "unsupported type to quantize" in message and f"elem_type: {_INT64}" in message
        return not integer_gather and "pre-processing before quantization" not in message
