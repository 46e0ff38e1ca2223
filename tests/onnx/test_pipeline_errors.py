"""Runtime "onnxruntime": each bad setting, missing dependency, foreign or unloadable graph is
one clear line."""
import dataclasses
import shutil
import sys

import pytest
import spacy
import srsly

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from spacy_elmo.dependencies import MissingDependency  # noqa: E402
from spacy_elmo.errors import ConfigError, SpacyElmoError  # noqa: E402
from spacy_elmo.layers.onnx_runtime import MAGIC, OnnxShim  # noqa: E402
from spacy_elmo.onnx import OnnxBiLM, export_onnx  # noqa: E402
from spacy_elmo.onnx.interface import ACTIVE_ROWS_KEY  # noqa: E402
from spacy_elmo.onnx.runner import OnnxGraphError, OutdatedGraphError  # noqa: E402

from ..conftest import TINY_CONFIG, random_bilm  # noqa: E402
from .pipelines import elmo_pipeline, save_tiny_bilm  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_bilm(tmp_path_factory.mktemp("bilm") / "tiny")


def one_line(err: pytest.ExceptionInfo) -> str:
    message = str(err.value)
    assert "\n" not in message, message
    return message


def add_elmo(**model):
    spacy.blank("en").add_pipe("elmo", config={"model": {"runtime": "onnxruntime", **model}})


@pytest.mark.parametrize(
    "model,message",
    [
        ({"compute_dtype": "bfloat16"}, 'runtime "onnxruntime" computes in float32 or int8, not bfloat16; set compute_dtype'),
        ({"device": "cuda"}, "runtime \"onnxruntime\" runs on the CPU, not on 'cuda'; set device"),
        ({"keep_softmax": True}, 'keep_softmax keeps the biLM\'s softmax for perplexities, which runtime "onnxruntime" does not'),
        ({"bilm": "exported/other.onnx"}, "bilm 'exported/other.onnx' is an ONNX graph; name the biLM itself"),
        ({"runtime": "tensorrt"}, "unknown 'runtime' 'tensorrt'; use one of torch, onnxruntime"),
    ],
)
def test_settings_that_onnx_runtime_cannot_run(model, message):
    with pytest.raises(ConfigError) as err:
        add_elmo(**model)
    assert one_line(err).startswith(f"elmo model: {message}")


def test_onnx_runtime_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` raises ImportError
    with pytest.raises(MissingDependency) as err:
        add_elmo()
    assert one_line(err) == "elmo model: runtime \"onnxruntime\" needs ONNX Runtime: pip install 'spacy-elmo[onnx]'"


def test_torch_missing(monkeypatch, tiny):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": str(tiny), "runtime": "onnxruntime"}})
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingDependency) as err:
        nlp.initialize()  # the export needs torch
    assert one_line(err) == (
        "elmo component 'elmo': elmo model: initializing a model on runtime \"onnxruntime\" (it exports the biLM to ONNX) "
        "needs PyTorch: pip install 'spacy-elmo[torch]'"
    )
    with pytest.raises(MissingDependency) as err:
        spacy.blank("en").add_pipe("elmo")  # runtime torch
    assert one_line(err) == "elmo model: runtime \"torch\" needs PyTorch: pip install 'spacy-elmo[torch]'"


def test_fine_tuning_is_refused(tiny):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"frozen": False, "model": {"bilm": str(tiny), "runtime": "onnxruntime"}})
    with pytest.raises(ConfigError) as err:
        nlp.initialize()
    assert one_line(err).startswith("elmo component 'elmo': frozen = false fine-tunes the biLM, but runtime \"onnxruntime\"")


def test_a_biLM_that_cannot_be_exported(tmp_path):
    checkpoint = tmp_path / "run" / "checkpoints" / "step-000000010"
    save_tiny_bilm(checkpoint / "model")
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": str(checkpoint), "runtime": "onnxruntime"}})
    with pytest.raises(SpacyElmoError) as err:
        nlp.initialize()
    assert f"is a pretraining run's output or checkpoint folder, not a model; its biLM is {checkpoint / 'model'}" in one_line(err)


def test_a_graph_saved_for_another_runtime_or_compute_dtype(tiny, tmp_path):
    elmo_pipeline(tiny).to_disk(tmp_path / "onnx")
    elmo_pipeline(tiny, "torch").to_disk(tmp_path / "torch")
    with pytest.raises(SpacyElmoError) as err:
        spacy.load(tmp_path / "onnx", config={"components.elmo.model.runtime": "torch"})
    assert "holds its biLM as an ONNX graph (saved with runtime \"onnxruntime\")" in one_line(err)
    with pytest.raises(SpacyElmoError) as err:
        spacy.load(tmp_path / "torch", config={"components.elmo.model.runtime": "onnxruntime"})
    assert "holds its biLM for runtime \"torch\"" in one_line(err)
    with pytest.raises(ConfigError) as err:
        spacy.load(tmp_path / "onnx", config={"components.elmo.model.compute_dtype": "int8"})
    assert "the pipeline's ONNX graph computes in float32, but its model block asks for int8" in one_line(err)


def test_a_graph_of_another_biLM_than_the_listeners(tiny, tmp_path):
    elmo_pipeline(tiny, tagger=True).to_disk(tmp_path / "tagged")
    wider = save_tiny_bilm(tmp_path / "wider", dataclasses.replace(TINY_CONFIG, projection_dim=12))
    elmo_pipeline(wider).to_disk(tmp_path / "other")
    for name in ("model", "checksums.json"):
        shutil.copy(tmp_path / "other" / "elmo" / name, tmp_path / "tagged" / "elmo" / name)
    with pytest.raises(SpacyElmoError) as err:
        spacy.load(tmp_path / "tagged")
    assert one_line(err).startswith("elmo listener: the biLM's nO is 24 on one side and 16 on the other")


def test_an_opset_onnx_runtime_cannot_run(tmp_path):
    import onnxruntime

    path = export_onnx(random_bilm(), tmp_path / "tiny.onnx")
    model = onnx.load(str(path))
    model.opset_import[0].version = 30
    onnx.save(model, str(path))
    with pytest.raises(OnnxGraphError) as err:
        OnnxBiLM(path)
    assert one_line(err).startswith(f"ONNX Runtime {onnxruntime.__version__} cannot load this graph: ")
    assert "Opset 30 is under development" in str(err.value)
    state = MAGIC + b'{"compute_dtype": "float32", "format": 2, "opset": 30, "written_by": "spacy-elmo 9.0"}\n' + path.read_bytes()
    with pytest.raises(OnnxGraphError) as err:
        OnnxShim("float32").from_bytes(srsly.msgpack_dumps({"config": {}, "state": state}))
    assert one_line(err).startswith(
        "elmo model: the pipeline's ONNX graph (opset 30, written by spacy-elmo 9.0) cannot run here: ONNX Runtime"
    )


def test_a_graph_that_is_not_a_biLM(tmp_path):
    from onnx import TensorProto, helper

    node = helper.make_node("Identity", ["x"], ["y"])
    graph = helper.make_graph(
        [node], "identity", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]
    )
    path = tmp_path / "identity.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    with pytest.raises(OnnxGraphError) as err:
        OnnxBiLM(path)
    assert one_line(err).startswith(f"the ONNX graph {path} is not a biLM written by export_onnx (x tensor(float) [2]; y tensor(float) [2])")
    assert one_line(err).endswith("; export the biLM with `python -m spacy_elmo export-onnx MODEL OUT`")


def test_a_pipeline_graph_of_another_format_or_without_active_rows(tmp_path):
    model = onnx.load(str(export_onnx(random_bilm(), tmp_path / "tiny.onnx")))
    kept = [prop for prop in model.metadata_props if prop.key != ACTIVE_ROWS_KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    graph = model.SerializeToString()
    state = MAGIC + b'{"compute_dtype": "float32", "opset": 17, "written_by": "spacy-elmo 0.3.0"}\n' + graph
    with pytest.raises(SpacyElmoError) as err:
        OnnxShim("float32").from_bytes(srsly.msgpack_dumps({"config": {}, "state": state}))
    assert one_line(err).startswith("elmo model: the pipeline's ONNX graph (written by spacy-elmo 0.3.0) is not in graph format 2, ")
    state = MAGIC + b'{"compute_dtype": "float32", "format": 2, "opset": 17, "written_by": "spacy-elmo 0.3.0"}\n' + graph
    with pytest.raises(OutdatedGraphError) as err:
        OnnxShim("float32").from_bytes(srsly.msgpack_dumps({"config": {}, "state": state}))
    assert one_line(err).startswith(
        f"elmo model: the pipeline's ONNX graph (opset 17, written by spacy-elmo 0.3.0) cannot run here: this ONNX graph lacks the metadata '{ACTIVE_ROWS_KEY}'"
    )
    assert one_line(err).endswith("switch its torch pipeline again with `python -m spacy_elmo set-runtime`")
