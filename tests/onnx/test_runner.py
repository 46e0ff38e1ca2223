"""`OnnxBiLM`: the embedding API of `BiLM` on ONNX Runtime, importable without torch."""
import importlib
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from spacy_elmo.onnx import OnnxBiLM, export_onnx  # noqa: E402
from spacy_elmo.onnx.interface import ACTIVE_ROWS_KEY  # noqa: E402
from spacy_elmo.onnx.runner import OutdatedGraphError  # noqa: E402

from ..conftest import random_bilm  # noqa: E402


@pytest.fixture(scope="module")
def tiny_onnx(tmp_path_factory):
    bilm = random_bilm()
    return bilm, export_onnx(bilm, tmp_path_factory.mktemp("onnx") / "tiny.onnx")


def test_the_runner_works_where_torch_cannot_be_imported(tiny_onnx):
    bilm, path = tiny_onnx
    saved = dict(sys.modules)
    try:
        for name in [n for n in sys.modules if n.split(".")[0] in ("spacy_elmo", "torch")]:
            del sys.modules[name]
        sys.modules["torch"] = None  # type: ignore[assignment]  (import torch raises ImportError)
        runner = importlib.import_module("spacy_elmo.onnx.runner").OnnxBiLM(path, threads=1)
        layers = runner.embed_sentences([["a", "b"], ["c"]])
        assert sys.modules["torch"] is None and not any(n.startswith("torch.") for n in sys.modules)
    finally:
        for name in set(sys.modules) - set(saved):
            del sys.modules[name]
        sys.modules.update(saved)
    for a, b in zip(layers, bilm.embed_sentences([["a", "b"], ["c"]])):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)


def test_runner_checks_its_input_as_the_biLM(tiny_onnx):
    runner = OnnxBiLM(tiny_onnx[1], threads=1)
    assert runner.embed_sentences([]) == []
    assert runner.embed_sentences([[], []])[1].shape == (3, 0, 16)
    with pytest.raises(TypeError, match="got a string"):
        runner.embed_sentences("a sentence")
    with pytest.raises(TypeError, match="token 1 is a int"):
        runner.embed_sentences([["a", 1]])


def test_a_graph_without_active_rows_is_refused_in_one_line(tiny_onnx, tmp_path):
    model = onnx.load(str(tiny_onnx[1]))
    assert ACTIVE_ROWS_KEY in {prop.key for prop in model.metadata_props}
    kept = [prop for prop in model.metadata_props if prop.key != ACTIVE_ROWS_KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    path = tmp_path / "no-active-rows.onnx"
    onnx.save(model, str(path))
    advice = "export the biLM again with `python -m spacy_elmo export-onnx MODEL OUT`, or for a pipeline switch its torch pipeline again with `python -m spacy_elmo set-runtime`"
    with pytest.raises(OutdatedGraphError) as err:
        OnnxBiLM(path, threads=1)
    assert str(err.value) == f"the ONNX graph {path} lacks the metadata '{ACTIVE_ROWS_KEY}' that every biLM graph of this spacy-elmo carries; {advice}"
    with pytest.raises(OutdatedGraphError) as err:
        OnnxBiLM(model.SerializeToString(), threads=1)
    assert str(err.value).startswith(f"this ONNX graph lacks the metadata '{ACTIVE_ROWS_KEY}'") and "\n" not in str(err.value)
