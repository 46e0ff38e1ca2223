"""scripts/evaluate_int8.py: the summary over seeds."""
import pytest

from . import load_script


def test_summary_gives_mean_and_sample_sd_per_dtype():
    runs = [
        {"seed": 0, "trained_dtype": "float32", "scores": {"float32": {"ents_f": 0.60}, "int8": {"ents_f": 0.61}}},
        {"seed": 1, "trained_dtype": "float32", "scores": {"float32": {"ents_f": 0.64}, "int8": {"ents_f": 0.63}}},
    ]
    summary = load_script("evaluate_int8").summarize(runs)
    assert summary["float32"]["ents_f"]["mean"] == pytest.approx(0.62)
    assert summary["float32"]["ents_f"]["sd"] == pytest.approx(0.0282843, rel=1e-5)  # n − 1
    assert summary["int8"]["ents_f"] == {"mean": pytest.approx(0.62), "sd": pytest.approx(0.0141421, rel=1e-5), "seeds": 2}
    assert "tag_acc" not in summary["int8"]
