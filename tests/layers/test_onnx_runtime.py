"""`OnnxShim`, the holder of runtime "onnxruntime"'s graph: its saved state (a header line, then
the graph; nothing without a graph), copies sharing one session, and a session of its own in a forked child.

The pipeline-level behaviour (features equal to torch, saved pipelines, errors of foreign graphs)
is tested in tests/onnx/test_pipeline.py and tests/onnx/test_pipeline_errors.py."""
import json
import os
import signal
import time

import numpy as np
import pytest
import srsly

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from spacy_elmo.about import __version__  # noqa: E402
from spacy_elmo.layers.model_settings import ElmoModelSettings  # noqa: E402
from spacy_elmo.layers.onnx_runtime import MAGIC, OnnxShim, build_onnx_model, hold_bilm, is_onnx_state  # noqa: E402
from spacy_elmo.onnx.interface import DEFAULT_OPSET, FORMAT_VERSION  # noqa: E402

from ..conftest import TINY_CONFIG, random_bilm  # noqa: E402

SENTENCES = [["A", "cat", "sat", "."], ["Dogs"]]


@pytest.fixture(scope="module")
def model():
    model = build_onnx_model(ElmoModelSettings(runtime="onnxruntime"))
    hold_bilm(model, random_bilm())
    return model


def test_holding_a_biLM_sets_the_sizes_and_a_header_naming_the_graph(model):
    assert (model.get_dim("nO"), model.get_dim("n_layers")) == (2 * TINY_CONFIG.projection_dim, TINY_CONFIG.n_layers + 1)
    shim = model.shims[0]
    assert shim.header == {"compute_dtype": "float32", "format": FORMAT_VERSION, "opset": DEFAULT_OPSET, "written_by": f"spacy-elmo {__version__}"}
    state = srsly.msgpack_loads(shim.to_bytes())["state"]
    assert is_onnx_state(state) and not is_onnx_state(shim.graph)
    header, graph = state[len(MAGIC) :].split(b"\n", 1)
    assert json.loads(header) == shim.header and graph == shim.graph


def test_the_saved_state_loads_the_same_graph_and_outputs(model):
    shim = model.shims[0]
    loaded = OnnxShim("float32").from_bytes(shim.to_bytes())
    assert loaded.graph == shim.graph and loaded.header == shim.header
    for got, expected in zip(loaded.runner().embed_sentences(SENTENCES), shim.runner().embed_sentences(SENTENCES)):
        np.testing.assert_array_equal(got, expected)


def test_a_shim_without_a_graph_saves_nothing_and_loading_nothing_empties_a_shim(model):
    empty = OnnxShim("float32")
    assert srsly.msgpack_loads(empty.to_bytes())["state"] == b""
    held = OnnxShim("float32").from_bytes(model.shims[0].to_bytes())
    held.from_bytes(empty.to_bytes())
    assert (held.runner(), held.graph, held.header) == (None, b"", {})


def test_a_copy_shares_the_graph_and_session(model):
    shim = model.shims[0]
    copied = shim.copy()
    assert copied is not shim and copied.runner() is shim.runner() and copied.graph is shim.graph
    assert copied.compute_dtype == "float32"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_runs_the_graph_in_a_session_of_its_own(model):
    shim = OnnxShim("float32").from_bytes(model.shims[0].to_bytes())
    runner = shim.runner()
    expected = runner.embed_sentences(SENTENCES)  # the parent's session has run
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            inherited = runner.session
            got = shim.runner().embed_sentences(SENTENCES)
            same = all(np.array_equal(g, e) for g, e in zip(got, expected))
            os.write(write_end, b"ok" if same and runner.session is not inherited else b"differs")
        finally:
            os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + 60
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child did not finish in 60 s (killed)")
        time.sleep(0.05)
    assert os.read(read_end, 16) == b"ok"
