"""`load_bilm(..., runtime="onnxruntime")`: the torch biLM's layers on ONNX Runtime, from a biLM
exported on the fly or from an exported graph (without torch), and one line for each bad setting."""
import importlib
import sys

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from spacy_elmo import load_bilm  # noqa: E402
from spacy_elmo.bilm import BiLM  # noqa: E402
from spacy_elmo.errors import ConfigError, SpacyElmoError  # noqa: E402
from spacy_elmo.onnx import OnnxBiLM, export_onnx, layer_cosines  # noqa: E402
from spacy_elmo.onnx.runner import OnnxGraphError  # noqa: E402

from .pipelines import save_tiny_bilm  # noqa: E402

ATOL = 1e-5
INT8_ATOL = 5e-2
MIN_COSINE = 0.99  # the int8 target of tests/onnx/test_quantization.py
SENTENCES = [["The", "cat", "sat", "on", "the", "mat", "."], ["Play"], [], "We went to see a play at the theatre .".split()]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_bilm(tmp_path_factory.mktemp("bilm") / "tiny")


@pytest.fixture(scope="module")
def torch_layers(tiny):
    return load_bilm(tiny).embed_sentences(SENTENCES)


@pytest.fixture(scope="module")
def graphs(tiny, tmp_path_factory):
    """The tiny biLM exported as a float32 and an int8 graph."""
    folder, bilm = tmp_path_factory.mktemp("onnx"), load_bilm(tiny)
    return {dtype: export_onnx(bilm, folder / f"{dtype}.onnx", int8=dtype == "int8") for dtype in ("float32", "int8")}


def assert_close(expected, actual, atol):
    assert [a.shape for a in actual] == [e.shape for e in expected]
    for e, a in zip(expected, actual):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, e, atol=atol, rtol=0)


def test_runtime_torch_is_the_torch_biLM(tiny):
    assert type(load_bilm(tiny)) is BiLM and type(load_bilm(tiny, runtime="torch", compute_dtype="float32")) is BiLM


@pytest.mark.parametrize("compute_dtype", [None, "float32", "fp32"])
def test_onnxruntime_gives_the_torch_layers(tiny, torch_layers, compute_dtype):
    bilm = load_bilm(tiny, runtime="onnxruntime", compute_dtype=compute_dtype, threads=1)
    assert isinstance(bilm, OnnxBiLM) and bilm.compute_dtype == "float32"
    assert (bilm.n_layers, bilm.output_dim) == (3, 16)
    assert_close(torch_layers, bilm.embed_sentences(SENTENCES), ATOL)
    assert_close(torch_layers[:2], bilm.embed_batch(SENTENCES[:2]), ATOL)


def test_onnxruntime_int8_stays_close_to_torch_float32(tiny, torch_layers):
    bilm = load_bilm(tiny, runtime="onnxruntime", compute_dtype="int8", threads=1)
    assert bilm.compute_dtype == "int8"
    got = bilm.embed_sentences(SENTENCES)
    assert_close(torch_layers, got, INT8_ATOL)
    assert min(layer_cosines(torch_layers, got)) >= MIN_COSINE


def test_original_weights_with_options(model_files):
    weights, options = model_files
    expected = load_bilm(weights, options=options).embed_sentences(SENTENCES)
    assert_close(expected, load_bilm(weights, runtime="onnxruntime", options=options, threads=1).embed_sentences(SENTENCES), ATOL)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_an_exported_graph_runs_as_it_was_written(graphs, torch_layers, dtype):
    for compute_dtype in (None, dtype):
        bilm = load_bilm(graphs[dtype], runtime="onnxruntime", compute_dtype=compute_dtype, threads=1)
        assert bilm.compute_dtype == dtype
        assert_close(torch_layers, bilm.embed_sentences(SENTENCES), ATOL if dtype == "float32" else INT8_ATOL)
    other = "float32" if dtype == "int8" else "int8"
    with pytest.raises(ConfigError, match=f"is a graph in {dtype}, not {other}; leave compute_dtype out"):
        load_bilm(str(graphs[dtype]), runtime="onnxruntime", compute_dtype=other)


def test_an_exported_graph_loads_where_torch_cannot_be_imported(graphs, torch_layers):
    saved = dict(sys.modules)
    try:
        for name in [n for n in sys.modules if n.split(".")[0] in ("spacy_elmo", "torch")]:
            del sys.modules[name]
        sys.modules["torch"] = None  # type: ignore[assignment]  (import torch raises ImportError)
        bilm = importlib.import_module("spacy_elmo").load_bilm(graphs["float32"], runtime="onnxruntime", threads=1)
        layers = bilm.embed_sentences(SENTENCES)
        assert sys.modules["torch"] is None and not any(n.startswith("torch.") for n in sys.modules)
    finally:
        for name in set(sys.modules) - set(saved):
            del sys.modules[name]
        sys.modules.update(saved)
    assert_close(torch_layers, layers, ATOL)


@pytest.mark.parametrize(
    "settings,message",
    [
        ({"runtime": "tensorflow"}, "unknown runtime 'tensorflow'; use one of torch, onnxruntime"),
        ({"runtime": "onnxruntime", "compute_dtype": "bfloat16"}, "computes in float32 or int8, not 'bfloat16'"),
        ({"runtime": "onnxruntime", "compute_dtype": "float16"}, "computes in float32 or int8, not 'float16'"),
        ({"runtime": "onnxruntime", "device": "cuda"}, "runs on the CPU, not on 'cuda'"),
        ({"runtime": "torch", "compute_dtype": "float16"}, "unknown compute dtype 'float16'; use one of float32, fp32, bfloat16, bf16, int8"),
    ],
)
def test_bad_settings_are_one_line(tiny, settings, message):
    with pytest.raises(SpacyElmoError, match=message) as err:
        load_bilm(tiny, **settings)
    assert "\n" not in str(err.value)


def test_bad_graph_sources(graphs, tmp_path):
    with pytest.raises(ConfigError, match="is an ONNX graph, which holds its own architecture"):
        load_bilm(graphs["float32"], runtime="onnxruntime", options=tmp_path / "options.json")
    with pytest.raises(SpacyElmoError, match="missing.onnx: no such file"):
        load_bilm(tmp_path / "missing.onnx", runtime="onnxruntime")


def test_an_export_that_does_not_give_the_torch_layers_is_refused(tiny, monkeypatch):
    monkeypatch.setattr("spacy_elmo.onnx.loading.layer_cosines", lambda expected, got: [1.0, 0.5, 1.0])
    with pytest.raises(OnnxGraphError, match=r"does not give torch's layers on a test sentence \(mean cosine per layer 1.0000, 0.5000"):
        load_bilm(tiny, runtime="onnxruntime")
