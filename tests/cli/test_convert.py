"""`python -m spacy_elmo convert`: ELMoForManyLangs folders and NLPL archives as native folders;
OUT appears only written and reloaded."""
import json
import zipfile
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

import spacy_elmo.bilm
from spacy_elmo.bilm import export_original, load_bilm
from spacy_elmo.bilm.model_info import read_model_info
from spacy_elmo.cli.app import app
from spacy_elmo.cli.main import main  # noqa: F401  (registers the commands)

from ..conftest import random_bilm

EFML = Path(__file__).parents[1] / "fixtures" / "efml"
SENTENCES = json.loads((EFML / "sentences.json").read_text(encoding="utf-8"))


def test_an_efml_folder_converts_to_a_native_folder_with_the_same_layers(tmp_path):
    result = CliRunner().invoke(app, ["convert", str(EFML), str(tmp_path / "zh"), "--lang", "zh"])
    assert result.exit_code == 0, result.output
    assert "max abs difference of the reloaded folder on a test sentence: 0.00e+00" in result.output
    assert sorted(p.name for p in (tmp_path / "zh").iterdir()) == ["config.json", "model.safetensors", "pretrain.json"]
    with np.load(EFML / "reference.npz") as reference:
        for i, layers in enumerate(load_bilm(tmp_path / "zh").embed_sentences(SENTENCES)):
            np.testing.assert_allclose(layers, reference[f"sentence_{i}"], atol=1e-5, rtol=0)
    assert read_model_info(tmp_path / "zh") == {"converted_from": str(EFML), "name": "zh", "lang": "zh"}


def test_an_nlpl_archive_converts_with_its_model_card(tmp_path):
    export_original(random_bilm(), tmp_path / "nlpl", weights_name="model.hdf5")
    meta = {"id": 211, "corpus": [{"description": "Norwegian Wikipedia", "language": "nor"}]}
    with zipfile.ZipFile(tmp_path / "211.zip", "w") as handle:
        handle.write(tmp_path / "nlpl" / "model.hdf5", "model.hdf5")
        handle.write(tmp_path / "nlpl" / "options.json", "options.json")
        handle.writestr("meta.json", json.dumps(meta))
    result = CliRunner().invoke(app, ["convert", str(tmp_path / "211.zip"), str(tmp_path / "native")])
    assert result.exit_code == 0, result.output
    info = read_model_info(tmp_path / "native")
    assert (info["name"], info["lang"], info["corpus"]) == ("nlpl-211", "nb", "Norwegian Wikipedia")


def test_a_bad_source_or_a_used_output_is_an_error(tmp_path):
    result = CliRunner().invoke(app, ["convert", str(tmp_path / "missing"), str(tmp_path / "out")])
    assert result.exit_code == 1 and "no such file or folder" in result.output
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    result = CliRunner().invoke(app, ["convert", str(EFML), str(tmp_path / "out")])
    assert result.exit_code == 1 and "exists and is not empty" in result.output


def reload_raising(error, staged):
    """A `load_bilm` that reads SOURCE but raises `error` on reloading the written folder, whose
    files it adds to `staged`."""

    def load(path, **kwargs):
        if path == str(EFML):
            return load_bilm(path)
        staged.append(sorted(p.name for p in path.iterdir()))
        raise error

    return load


def test_ctrl_c_or_a_failure_in_the_check_leaves_no_folder(tmp_path, monkeypatch):
    staged = []
    monkeypatch.setattr(spacy_elmo.bilm, "load_bilm", reload_raising(KeyboardInterrupt(), staged))
    result = CliRunner().invoke(app, ["convert", str(EFML), str(tmp_path / "zh")])
    assert result.exit_code == 130 and result.output.strip().splitlines() == ["error: interrupted"]
    monkeypatch.setattr(spacy_elmo.bilm, "load_bilm", reload_raising(RuntimeError("bad weights"), staged))
    result = CliRunner().invoke(app, ["convert", str(EFML), str(tmp_path / "zh")])
    assert isinstance(result.exception, RuntimeError)
    assert staged == [["config.json", "model.safetensors", "pretrain.json"]] * 2  # written in full, then not kept
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    result = CliRunner().invoke(app, ["convert", str(EFML), str(tmp_path / "zh")])
    assert result.exit_code == 0, result.output
    assert [p.name for p in tmp_path.iterdir()] == ["zh"]
    assert read_model_info(tmp_path / "zh")["name"] == "zh"
