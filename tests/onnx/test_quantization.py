"""int8 ONNX models stay close to the torch float32 biLM, layer by layer."""
import logging

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from spacy_elmo import load_bilm  # noqa: E402
from spacy_elmo.onnx import OnnxBiLM, export_onnx, layer_cosines, quantize_onnx  # noqa: E402

from ..conftest import random_bilm  # noqa: E402

SENTENCES = [
    "The cat sat on the mat .".split(),
    "Stocks fell sharply on Monday after the central bank raised interest rates again .".split(),
    ["Play"],
    "We went to see a play at the theatre last night .".split(),
]
MIN_COSINE = 0.99


def test_int8_en_base_v2_keeps_each_layers_direction(tmp_path):
    bilm = load_bilm("en_base_v2")
    source = export_onnx(bilm, tmp_path / "float32.onnx")
    target = quantize_onnx(source, tmp_path / "int8.onnx")
    assert target.stat().st_size < source.stat().st_size / 3
    runner = OnnxBiLM(target, threads=1)
    expected = bilm.embed_sentences(SENTENCES)
    batched = runner.embed_sentences(SENTENCES)
    cosines = layer_cosines(expected, batched)
    assert len(cosines) == 3 and min(cosines) >= MIN_COSINE, cosines
    alone = [runner.embed_sentences([s])[0] for s in SENTENCES]
    for a, b in zip(alone, batched):  # each product's input is quantized per call: batches differ a little
        assert min(layer_cosines([a], [b])) >= MIN_COSINE


def test_layer_cosines():
    x = np.random.default_rng(0).normal(size=(3, 4, 8)).astype(np.float32)
    assert np.allclose(layer_cosines([x], [2 * x]), 1.0)
    assert np.allclose(layer_cosines([x, x], [x, -x]), 0.0)


def test_quantization_warns_of_nothing(tmp_path, caplog):
    source = export_onnx(random_bilm(), tmp_path / "float32.onnx")
    with caplog.at_level(logging.WARNING):
        quantize_onnx(source, tmp_path / "int8.onnx")
    assert not [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
