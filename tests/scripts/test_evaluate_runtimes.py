"""scripts/evaluate_runtimes.py on a tiny trained pipeline: four variants scored, differences
from torch float32, and the float32 graph scoring exactly as torch."""
import json

import pytest

from . import load_script

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from ..pipeline.trained_pipeline import train_tiny_pipeline, write_test_set  # noqa: E402


def test_four_variants_are_scored_against_torch_float32(tmp_path, capsys, monkeypatch):
    import torch

    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the script sets it (ONNX Runtime's threads); restored after
    monkeypatch.setattr(torch, "set_num_threads", lambda n: None)  # and torch's, for the whole process
    script = load_script("evaluate_runtimes")
    pipeline = train_tiny_pipeline(tmp_path / "pipeline")
    test_data = write_test_set(tmp_path / "test.spacy")
    script.main(pipeline, test_data, tmp_path / "out" / "runtimes.json", threads=1, max_drop=0.3)
    record = json.loads((tmp_path / "out" / "runtimes.json").read_text())
    assert record["trained"] == {"elmo": "torch float32"}
    assert list(record["scores"]) == ["torch float32", "torch int8", "onnxruntime float32", "onnxruntime int8"]
    for scores in record["scores"].values():
        assert {"ents_f", "tag_acc", "dep_las", "speed"} <= set(scores) and "pos_acc" not in scores
    assert set(record["differences"]) == {"torch int8", "onnxruntime float32", "onnxruntime int8"}
    assert set(record["differences"]["torch int8"]) == {"ents_f", "tag_acc", "dep_las"}
    # float32 on ONNX Runtime annotates as torch does (features equal to 1e-5).
    assert record["differences"]["onnxruntime float32"] == {"ents_f": 0.0, "tag_acc": 0.0, "dep_las": 0.0}
    assert record["largest_drop_points"]["onnxruntime float32"] == 0.0 and record["within_max_drop"]["onnxruntime float32"]
    printed = capsys.readouterr().out
    assert "onnxruntime int8" in printed and "largest drop" in printed
    assert not list(pipeline.parent.glob(".*"))  # the ONNX copies went to a temporary folder


def test_drops_are_in_points_and_checked_against_the_bar():
    script = load_script("evaluate_runtimes")
    scores = {
        "torch float32": {"ents_f": 0.800, "tag_acc": 0.950, "speed": 1.0},
        "torch int8": {"ents_f": 0.798, "tag_acc": 0.951, "speed": 1.0},
        "onnxruntime int8": {"ents_f": 0.795, "tag_acc": 0.950, "speed": 1.0},
    }
    compared = script.compare(scores, max_drop=0.3)
    assert compared["differences"]["torch int8"] == {"ents_f": pytest.approx(-0.002), "tag_acc": pytest.approx(0.001)}
    assert compared["largest_drop_points"] == {"torch int8": pytest.approx(0.2), "onnxruntime int8": pytest.approx(0.5)}
    assert compared["within_max_drop"] == {"torch int8": True, "onnxruntime int8": False}
