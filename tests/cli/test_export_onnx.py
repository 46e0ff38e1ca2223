"""`python -m spacy_elmo export-onnx`: one success report, one-line errors and Ctrl-C, OUT only ever complete."""
import re
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import spacy_elmo.bilm  # noqa: E402
import spacy_elmo.onnx.export  # noqa: E402
import spacy_elmo.onnx.runner  # noqa: E402
from spacy_elmo.bilm import save_bilm  # noqa: E402
from spacy_elmo.bilm.quantization import quantize_int8  # noqa: E402
from spacy_elmo.cli.app import app  # noqa: E402
from spacy_elmo.cli.main import main  # noqa: E402  (registers the commands)
from spacy_elmo.onnx import OnnxBiLM  # noqa: E402

from ..conftest import random_bilm  # noqa: E402

DIFFERENCE = re.compile(r"^max abs difference of ONNX Runtime to torch on a test sentence: (\S+)$", re.MULTILINE)


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory):
    return save_bilm(random_bilm(), tmp_path_factory.mktemp("tiny") / "tiny")


def export(*args):
    return CliRunner().invoke(app, ["export-onnx", *map(str, args)])


def assert_one_line_error(result, message):
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.output


def test_export_reports_the_difference_to_torch(tmp_path, model_folder):
    result = export(model_folder, tmp_path / "tiny.onnx")
    assert result.exit_code == 0, result.output
    assert f"{model_folder} -> {tmp_path / 'tiny.onnx'} (float32, opset 17; 3 layers of 16)" in result.output
    assert float(DIFFERENCE.search(result.output).group(1)) < 1e-5
    assert OnnxBiLM(tmp_path / "tiny.onnx", threads=1).embed_sentences([["a", "b"]])[0].shape == (3, 2, 16)


def test_int8_export_reports_cosines(tmp_path, model_folder):
    result = export(model_folder, tmp_path / "int8.onnx", "--int8", "--opset", "20")
    assert result.exit_code == 0, result.output
    assert "(int8, opset 20; 3 layers of 16)" in result.output
    cosines = re.search(r"mean cosine of each layer to torch float32: (.+)$", result.output, re.MULTILINE).group(1)
    assert len(cosines.split(", ")) == 3
    assert DIFFERENCE.search(result.output)


def test_an_existing_output_needs_force(tmp_path, model_folder):
    (tmp_path / "out.onnx").write_text("keep")
    assert_one_line_error(export(model_folder, tmp_path / "out.onnx"), "exists; pass --force to overwrite it")
    assert (tmp_path / "out.onnx").read_text() == "keep"
    result = export(model_folder, tmp_path / "out.onnx", "--force")
    assert result.exit_code == 0, result.output


def test_errors_are_one_line(tmp_path, model_folder, monkeypatch):
    assert_one_line_error(export(tmp_path / "missing", tmp_path / "a.onnx"), "no such file or folder")
    assert_one_line_error(export(model_folder, tmp_path / "b.onnx", "--opset", "9"), "opset 9 is not supported")
    save_bilm(random_bilm(), tmp_path / "run" / "model")  # a pretraining run's output folder
    assert_one_line_error(export(tmp_path / "run", tmp_path / "e.onnx"), "is a pretraining run's output or checkpoint folder")
    monkeypatch.setattr(spacy_elmo.bilm, "load_bilm", lambda *args, **kwargs: quantize_int8(random_bilm()))
    assert_one_line_error(export(model_folder, tmp_path / "d.onnx"), "quantized to int8")


def test_bundled_model(tmp_path):
    result = export("en_base_v2", tmp_path / "en.onnx")
    assert result.exit_code == 0, result.output
    assert "(float32, opset 17; 3 layers of 256)" in result.output
    assert float(DIFFERENCE.search(result.output).group(1)) < 1e-5
    assert np.isfinite(OnnxBiLM(tmp_path / "en.onnx", threads=1).embed_sentences([["Hello"]])[0]).all()


def assert_nothing_beside(folder, *kept):
    assert sorted(p.name for p in folder.iterdir()) == sorted(kept), "a staged output was left behind"


def test_ctrl_c_during_the_check_leaves_the_old_output_and_one_line(tmp_path, model_folder, monkeypatch):
    (tmp_path / "out.onnx").write_text("keep")

    def interrupted(path, threads):
        assert path.is_file() and path.parent == tmp_path and path.name.startswith(".out.onnx.partial-")
        raise KeyboardInterrupt

    monkeypatch.setattr(spacy_elmo.onnx.runner, "OnnxBiLM", interrupted)
    result = export(model_folder, tmp_path / "out.onnx", "--force")
    assert result.exit_code == 130 and result.output.strip().splitlines() == ["error: interrupted"]
    assert (tmp_path / "out.onnx").read_text() == "keep"
    assert_nothing_beside(tmp_path, "out.onnx")
    monkeypatch.undo()
    result = export(model_folder, tmp_path / "out.onnx", "--force")
    assert result.exit_code == 0 and DIFFERENCE.search(result.output), result.output
    assert_nothing_beside(tmp_path, "out.onnx")


def test_a_failed_export_leaves_no_file(tmp_path, model_folder, monkeypatch):
    def disk_full(bilm, path, **kwargs):
        path.write_bytes(b"half a graph")
        raise OSError("No space left on device")

    monkeypatch.setattr(spacy_elmo.onnx.export, "export_onnx", disk_full)
    assert_one_line_error(export(model_folder, tmp_path / "out.onnx"), "No space left on device")
    assert_nothing_beside(tmp_path)
    monkeypatch.undo()
    assert export(model_folder, tmp_path / "out.onnx").exit_code == 0  # no "exists; pass --force"


def test_ctrl_c_through_the_entry_point_is_one_line_and_exit_130(tmp_path, model_folder, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(spacy_elmo.bilm, "load_bilm", interrupted)
    monkeypatch.setattr(sys, "argv", ["spacy_elmo", "export-onnx", str(model_folder), str(tmp_path / "out.onnx")])
    with pytest.raises(SystemExit) as exit:
        main()
    assert exit.value.code == 130
    assert capsys.readouterr().err == "error: interrupted\n"
    assert_nothing_beside(tmp_path)
