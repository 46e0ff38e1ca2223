"""The elmo component on runtime "onnxruntime": the torch runtime's features through the same
segments, windows and batches; the graph saved inside the pipeline; listeners sized from it."""
import shutil

import numpy as np
import pytest
import spacy
from spacy.util import load_model_from_config

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from spacy_elmo.layers.onnx_runtime import MAGIC  # noqa: E402
from spacy_elmo.onnx import OnnxBiLM, layer_cosines  # noqa: E402

from ..processes import pipe_in_two_processes  # noqa: E402
from .pipelines import TEXTS, elmo_pipeline, layers, save_tiny_bilm  # noqa: E402

ATOL = 1e-5


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_bilm(tmp_path_factory.mktemp("bilm") / "tiny")


def assert_same(expected, actual, atol=ATOL):
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual):
        assert a.shape == e.shape and a.dtype == np.float32
        np.testing.assert_allclose(a, e, atol=atol, rtol=0)


@pytest.mark.parametrize(
    "model",
    [
        {},
        {"context": "doc", "window": 6, "stride": 4},
        {"context": "sentences", "window": 5, "stride": 5, "batch_size": 2, "max_tokens": 12},
    ],
    ids=["sentences", "doc-windows", "small-batches"],
)
def test_float32_equals_the_torch_runtime(tiny, model):
    texts = TEXTS if model.get("context") != "sentences" else [t for t in TEXTS if t.strip()]
    torch_nlp, onnx_nlp = elmo_pipeline(tiny, "torch", **model), elmo_pipeline(tiny, **model)
    assert isinstance(onnx_nlp.get_pipe("elmo").bilm, OnnxBiLM)
    assert_same(layers(torch_nlp, texts), layers(onnx_nlp, texts))
    assert_same(layers(onnx_nlp, texts), [onnx_nlp(text)._.elmo for text in texts], atol=0)


def test_the_saved_pipeline_holds_the_graph_and_runs_it(tiny, tmp_path):
    folder = tmp_path / "bilm"
    shutil.copytree(tiny, folder)
    nlp = elmo_pipeline(folder)
    shutil.rmtree(folder)  # the graph travels with the pipeline
    nlp.to_disk(tmp_path / "pipeline")
    saved = (tmp_path / "pipeline" / "elmo" / "model").read_bytes()
    assert MAGIC in saved and b"data.pkl" not in saved
    loaded = spacy.load(tmp_path / "pipeline")
    assert isinstance(loaded.get_pipe("elmo").bilm, OnnxBiLM)
    assert_same(layers(nlp), layers(loaded), atol=0)
    restored = load_model_from_config(nlp.config).from_bytes(nlp.to_bytes())
    assert_same(layers(nlp), layers(restored), atol=0)


def test_int8_is_close_to_float32_and_saved_as_int8(tiny, tmp_path):
    texts = [TEXTS[0], TEXTS[3], TEXTS[4]]  # no whitespace tokens: their zero vectors have no direction
    nlp = elmo_pipeline(tiny, compute_dtype="int8")
    got = layers(nlp, texts)
    assert min(layer_cosines(layers(elmo_pipeline(tiny, "torch"), texts), got)) >= 0.99
    nlp.to_disk(tmp_path / "pipeline")
    assert b'"compute_dtype": "int8"' in (tmp_path / "pipeline" / "elmo" / "model").read_bytes()
    assert_same(got, layers(spacy.load(tmp_path / "pipeline"), texts), atol=0)


def test_listeners_take_their_sizes_from_the_graph(tiny, tmp_path):
    nlp = elmo_pipeline(tiny, tagger=True)
    runner = nlp.get_pipe("elmo").bilm
    assert (runner.n_layers, runner.output_dim) == (3, 16)
    (listener,) = nlp.get_pipe("elmo").listeners
    assert (listener.get_dim("n_layers"), listener.get_dim("nO")) == (3, 16)
    tags = [[t.tag_ for t in doc] for doc in nlp.pipe(TEXTS)]
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert [[t.tag_ for t in doc] for doc in loaded.pipe(TEXTS)] == tags
    loaded.replace_listeners("elmo", "tagger", ["model.tok2vec"])  # the tagger gets a copy of the model
    loaded.remove_pipe("elmo")
    assert [[t.tag_ for t in doc] for doc in loaded.pipe(TEXTS)] == tags


@pytest.mark.parametrize("compute_dtype", ["float32", "int8"])
@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_two_processes_equal_one(tiny, tmp_path, compute_dtype, warm):
    # Forked workers used to hang for good destroying the parent's session (cold int8: 5 runs in 6).
    nlp = elmo_pipeline(tiny, compute_dtype=compute_dtype)
    nlp.to_disk(tmp_path / "pipeline")
    texts = TEXTS * 3
    # int8 quantizes each run's activations with that run's range: other batches, other roundings.
    atol = 0 if compute_dtype == "float32" else 5e-3
    assert_same(layers(nlp, texts), pipe_in_two_processes(tmp_path / "pipeline", texts, warm), atol=atol)
