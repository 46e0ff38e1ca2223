"""`python -m spacy_elmo set-runtime`: a trained pipeline's elmo component moved between torch and
ONNX Runtime (float32, int8), every other component the same; v1 pipelines; one-line errors and
Ctrl-C, OUTPUT only ever complete."""
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.language import Language
from typer.testing import CliRunner

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from spacy_elmo.bilm import save_bilm  # noqa: E402
from spacy_elmo.cli.app import app  # noqa: E402
from spacy_elmo.cli.main import main  # noqa: E402,F401  (registers the commands)
from spacy_elmo.layers.bundled_reference import MAGIC as REFERENCE  # noqa: E402
from spacy_elmo.layers.onnx_runtime import MAGIC as GRAPH  # noqa: E402
from spacy_elmo.onnx import OnnxBiLM, layer_cosines  # noqa: E402

from ..conftest import random_bilm  # noqa: E402
from ..onnx.pipelines import elmo_pipeline, save_tiny_bilm  # noqa: E402
from ..pipeline.trained_pipeline import annotations, features, train_tiny_pipeline  # noqa: E402

DIFFERENCE = re.compile(r"max abs difference (\S+); mean cosine of each layer (.+)$", re.MULTILINE)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    return train_tiny_pipeline(tmp_path_factory.mktemp("trained") / "torch")


@pytest.fixture(scope="module")
def expected(trained):
    nlp = spacy.load(trained)
    return {"annotations": annotations(nlp), "features": features(nlp)}


@pytest.fixture(scope="module")
def onnx_float32(trained, tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("onnx") / "float32"
    result = set_runtime(trained, output, "--runtime", "onnxruntime")
    assert result.exit_code == 0, result.output
    return output


@pytest.fixture(scope="module")
def onnx_int8(trained, tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("onnx") / "int8"
    result = set_runtime(trained, output, "--runtime", "onnxruntime", "--compute-dtype", "int8")
    assert result.exit_code == 0, result.output
    return output


def set_runtime(*args):
    return CliRunner().invoke(app, ["set-runtime", *map(str, args)])


def assert_one_line_error(result, message):
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.output


def files(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def elmo_block(pipeline: Path) -> dict:
    return spacy.util.load_config(pipeline / "config.cfg")["components"]["elmo"]["model"]


def test_onnx_float32_gives_the_torch_features_and_the_same_annotations(trained, expected, onnx_float32):
    nlp = spacy.load(onnx_float32)
    assert isinstance(nlp.get_pipe("elmo").bilm, OnnxBiLM)
    for want, got in zip(expected["features"], features(nlp)):
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)
    assert annotations(nlp) == expected["annotations"]
    assert sorted(nlp.get_pipe("elmo").listening_components) == ["ner", "parser", "tagger"]
    # Every other component, the vocab and the tokenizer are copied byte for byte; the config
    # differs in the runtime only.
    before, after = files(trained), files(onnx_float32)
    assert GRAPH in after.pop("elmo/model") and REFERENCE in before.pop("elmo/model")
    assert after.pop("elmo/checksums.json") != before.pop("elmo/checksums.json")
    config_before, config_after = (spacy.util.load_config(p / "config.cfg", interpolate=False) for p in (trained, onnx_float32))
    del before["config.cfg"], after["config.cfg"]
    assert after == before
    assert config_after["components"]["elmo"]["model"].pop("runtime") == "onnxruntime"
    assert config_before["components"]["elmo"]["model"].pop("runtime") == "torch"
    assert config_after == config_before


def test_the_command_reports_what_it_did(trained, tmp_path):
    result = set_runtime(trained, tmp_path / "copy", "--runtime", "onnxruntime", "--compute-dtype", "float32")
    assert result.exit_code == 0, result.output
    assert f"{trained} -> {tmp_path / 'copy'}: elmo component 'elmo': torch float32 -> onnxruntime float32" in result.output
    assert "to the pipeline's biLM on torch in float32" in result.output
    difference, cosines = DIFFERENCE.search(result.output).groups()
    assert float(difference) < 1e-5 and len(cosines.split(", ")) == 3


def test_onnx_int8_is_close_and_saved_as_int8(expected, onnx_int8):
    assert b'"compute_dtype": "int8"' in (onnx_int8 / "elmo" / "model").read_bytes()[:300]
    assert elmo_block(onnx_int8)["compute_dtype"] == "int8"
    nlp = spacy.load(onnx_int8)
    assert min(layer_cosines(expected["features"], features(nlp))) >= 0.99
    assert [len(tags) for tags in annotations(nlp)["tags"]] == [len(tags) for tags in expected["annotations"]["tags"]]
    (listener, *_) = nlp.get_pipe("elmo").listeners
    assert (listener.get_dim("n_layers"), listener.get_dim("nO")) == (3, 256)


def test_float32_graph_to_int8_is_the_int8_export(onnx_float32, onnx_int8, tmp_path):
    result = set_runtime(onnx_float32, tmp_path / "from-graph", "--runtime", "onnxruntime", "--compute-dtype", "int8")
    assert result.exit_code == 0, result.output
    assert "onnxruntime float32 -> onnxruntime int8" in result.output and "to the pipeline's float32 graph" in result.output
    texts = ["We saw a play.", "Let us play chess in Paris."]
    np.testing.assert_allclose(
        np.concatenate(features(spacy.load(tmp_path / "from-graph"), texts), axis=1),
        np.concatenate(features(spacy.load(onnx_int8), texts), axis=1),
        atol=1e-6,
    )


def test_an_int8_graph_goes_back_to_float32_by_its_bilm(expected, onnx_int8, tmp_path):
    result = set_runtime(onnx_int8, tmp_path / "float32", "--runtime", "onnxruntime")
    assert result.exit_code == 0, result.output
    assert "onnxruntime int8 -> onnxruntime float32" in result.output
    for want, got in zip(expected["features"], features(spacy.load(tmp_path / "float32"))):
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)


def test_back_to_torch_is_the_pipeline_again(trained, expected, onnx_float32, tmp_path):
    result = set_runtime(onnx_float32, tmp_path / "torch", "--runtime", "torch")
    assert result.exit_code == 0, result.output
    assert REFERENCE in (tmp_path / "torch" / "elmo" / "model").read_bytes()  # en_base by name again
    assert elmo_block(tmp_path / "torch")["runtime"] == "torch"
    nlp = spacy.load(tmp_path / "torch")
    for want, got in zip(expected["features"], features(nlp)):
        np.testing.assert_array_equal(got, want)
    assert annotations(nlp) == expected["annotations"]


def v1_pipeline(trained: Path, folder: Path, dtype: str = "float32") -> Path:
    shutil.copytree(trained, folder)
    config = (folder / "config.cfg").read_text()
    config = config.replace('"spacy-elmo.ElmoModel.v2"', '"spacy-elmo.ElmoModel.v1"').replace('compute_dtype = "float32"', f'dtype = "{dtype}"')
    config = re.sub(r'runtime = "torch"\n', "", config)
    (folder / "config.cfg").write_text(config)
    assert elmo_block(folder)["@architectures"] == "spacy-elmo.ElmoModel.v1"
    return folder


def test_a_v1_pipeline_is_upgraded_to_v2(trained, expected, tmp_path):
    source = v1_pipeline(trained, tmp_path / "v1", dtype="int8")
    assert spacy.load(source).get_pipe("elmo").model.attrs["settings"].compute_dtype == "int8"
    result = set_runtime(source, tmp_path / "onnx", "--runtime", "onnxruntime")
    assert result.exit_code == 0, result.output
    assert "upgraded components.elmo.model -> spacy-elmo.ElmoModel.v2" in result.output
    assert "torch int8 -> onnxruntime float32" in result.output
    block = elmo_block(tmp_path / "onnx")
    assert block["@architectures"] == "spacy-elmo.ElmoModel.v2" and "dtype" not in block
    assert (block["runtime"], block["compute_dtype"]) == ("onnxruntime", "float32")
    nlp = spacy.load(tmp_path / "onnx")
    for want, got in zip(expected["features"], features(nlp)):  # the weights as saved, not their int8 copy
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)
    assert annotations(nlp) == expected["annotations"]


def test_a_v1_pipeline_stays_on_torch_in_another_dtype(trained, expected, tmp_path):
    source = v1_pipeline(trained, tmp_path / "v1")
    result = set_runtime(source, tmp_path / "int8", "--runtime", "torch", "--compute-dtype", "int8")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "int8" / "elmo" / "model").read_bytes() == (trained / "elmo" / "model").read_bytes()
    block = elmo_block(tmp_path / "int8")
    assert (block["@architectures"], block["runtime"], block["compute_dtype"]) == ("spacy-elmo.ElmoModel.v2", "torch", "int8")
    assert min(layer_cosines(expected["features"], features(spacy.load(tmp_path / "int8")))) >= 0.99


def test_a_bundled_biLM_saved_under_an_earlier_default_is_named_in_the_copy(trained, expected, tmp_path):
    source = tmp_path / "old-default"
    shutil.copytree(trained, source)
    config = (source / "config.cfg").read_text()
    (source / "config.cfg").write_text(config.replace('bilm = "en_base"', "bilm = null"))  # null: now en_base_v2
    result = set_runtime(source, tmp_path / "onnx", "--runtime", "onnxruntime")
    assert result.exit_code == 0, result.output
    assert "bilm None -> 'en_base' (the bundled biLM the pipeline holds)" in result.output
    assert elmo_block(tmp_path / "onnx")["bilm"] == "en_base"
    result = set_runtime(tmp_path / "onnx", tmp_path / "torch", "--runtime", "torch")  # so the way back finds it
    assert result.exit_code == 0, result.output
    for want, got in zip(expected["features"], features(spacy.load(tmp_path / "torch"))):
        np.testing.assert_array_equal(got, want)


def test_settings_onnx_runtime_cannot_take_are_changed_and_reported(trained, expected, tmp_path):
    source = tmp_path / "gpu"
    shutil.copytree(trained, source)
    config = (source / "config.cfg").read_text()
    assert 'device = "auto"' in config and "frozen = true" in config
    (source / "config.cfg").write_text(config.replace('device = "auto"', 'device = "cuda:0"').replace("frozen = true", "frozen = false"))
    result = set_runtime(source, tmp_path / "onnx", "--runtime", "onnxruntime")
    assert result.exit_code == 0, result.output
    assert "device 'cuda:0' -> 'cpu' (ONNX Runtime runs on the CPU)" in result.output
    assert "frozen false -> true (ONNX Runtime has no gradients; the fine-tuned biLM is exported)" in result.output
    config = spacy.util.load_config(tmp_path / "onnx" / "config.cfg")["components"]["elmo"]
    assert (config["frozen"], config["model"]["device"], config["model"]["runtime"]) == (True, "cpu", "onnxruntime")
    for want, got in zip(expected["features"], features(spacy.load(tmp_path / "onnx"))):
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)


# --- errors ----------------------------------------------------------------------------------


def test_an_existing_output_needs_force(trained, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "config.cfg").write_text("keep")
    assert_one_line_error(set_runtime(trained, tmp_path / "out", "--runtime", "onnxruntime"), "exists; pass --force to replace it")
    assert (tmp_path / "out" / "config.cfg").read_text() == "keep"
    result = set_runtime(trained, tmp_path / "out", "--runtime", "onnxruntime", "--force")
    assert result.exit_code == 0, result.output
    assert elmo_block(tmp_path / "out")["runtime"] == "onnxruntime"


def test_force_replaces_only_a_pipeline(trained, tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("keep")
    assert_one_line_error(
        set_runtime(trained, tmp_path / "notes", "--runtime", "onnxruntime", "--force"),
        "is a folder but not a spaCy pipeline; --force replaces only a pipeline",
    )
    assert_one_line_error(set_runtime(trained, trained, "--runtime", "onnxruntime", "--force"), "holds the pipeline")
    assert (tmp_path / "notes" / "keep.txt").read_text() == "keep"


def interrupted_halfway(nlp, path, **kwargs):
    """A `Language.to_disk` that writes the config, then meets Ctrl-C."""
    path.mkdir()
    (path / "config.cfg").write_text(nlp.config.to_str())
    raise KeyboardInterrupt


def test_ctrl_c_while_writing_is_one_line_and_leaves_the_output_as_it_was(trained, tmp_path, monkeypatch):
    output = tmp_path / "onnx"
    monkeypatch.setattr(Language, "to_disk", interrupted_halfway)
    result = set_runtime(trained, output, "--runtime", "onnxruntime")
    assert result.exit_code == 130 and result.output.strip().splitlines() == ["error: interrupted"]
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    assert set_runtime(trained, output, "--runtime", "onnxruntime").exit_code == 0
    written = files(output)
    monkeypatch.setattr(Language, "to_disk", interrupted_halfway)
    result = set_runtime(trained, output, "--runtime", "onnxruntime", "--compute-dtype", "int8", "--force")
    assert result.exit_code == 130 and result.output.strip().splitlines() == ["error: interrupted"]
    assert files(output) == written
    assert list(tmp_path.iterdir()) == [output]


@pytest.mark.parametrize(
    "options,message",
    [
        (["--runtime", "onnxruntime", "--compute-dtype", "bfloat16"], 'runtime "onnxruntime" computes in float32 or int8, not bfloat16'),
        (["--runtime", "tensorflow"], "unknown runtime 'tensorflow'; use one of torch, onnxruntime"),
        (["--runtime", "torch", "--compute-dtype", "float64"], "unknown compute dtype 'float64'"),
    ],
)
def test_bad_settings_are_one_line(trained, tmp_path, options, message):
    assert_one_line_error(set_runtime(trained, tmp_path / "out", *options), message)
    assert not (tmp_path / "out").exists()


def test_what_is_not_a_pipeline_with_elmo_is_one_line(tmp_path):
    assert_one_line_error(set_runtime(tmp_path / "missing", tmp_path / "out", "--runtime", "onnxruntime"), "is not a saved spaCy pipeline")
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.to_disk(tmp_path / "plain")
    assert_one_line_error(set_runtime(tmp_path / "plain", tmp_path / "out", "--runtime", "onnxruntime"), "has no elmo component")
    assert not (tmp_path / "out").exists()


def test_a_graph_whose_weights_are_gone_cannot_go_back_to_torch(tmp_path):
    bilm = save_tiny_bilm(tmp_path / "tiny")
    elmo_pipeline(bilm).to_disk(tmp_path / "onnx")
    shutil.rmtree(bilm)
    assert_one_line_error(
        set_runtime(tmp_path / "onnx", tmp_path / "out", "--runtime", "torch"),
        f"elmo component 'elmo' holds an ONNX graph, and the torch weights it was made from cannot be read from its bilm setting '{bilm}'",
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_a_graph_of_other_weights_than_its_bilm_setting_is_refused(tmp_path, dtype):
    bilm = save_tiny_bilm(tmp_path / "tiny")
    elmo_pipeline(bilm, compute_dtype=dtype).to_disk(tmp_path / "onnx")
    shutil.rmtree(bilm)
    save_bilm(random_bilm(seed=1), bilm)  # other weights under the same name
    target = ["--compute-dtype", "float32"] if dtype == "int8" else []
    for runtime in ("torch", "onnxruntime") if dtype == "int8" else ("torch",):
        result = set_runtime(tmp_path / "onnx", tmp_path / "out", "--runtime", runtime, *target)
        assert_one_line_error(result, "holds an ONNX graph that was not made from the biLM its bilm setting")
