"""scripts/compare.py: tables pair the seeds both variants have."""
import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def compare():
    spec = importlib.util.spec_from_file_location("compare", REPO / "scripts" / "compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record(name, f1_by_seed, mix=None):
    runs = [{"seed": seed, "scores": {"tag_acc": f1}, "layer_mix": mix} for seed, f1 in f1_by_seed.items()]
    return {"model": f"training/{name}", "test": "test.spacy", "train": "train.spacy", "runs": runs}


def test_a_table_uses_only_the_seeds_both_variants_have(compare, tmp_path):
    mix = {"component": "tagger", "weights": [0.2, 0.3, 0.5], "gamma": 1.0}
    (tmp_path / "tagger-baseline.json").write_text(json.dumps(record("tagger-baseline", {0: 0.90, 1: 0.92, 2: 0.94})))
    (tmp_path / "tagger-elmo.json").write_text(json.dumps(record("tagger-elmo", {0: 0.95}, mix)))
    compare.main(tmp_path, tmp_path / "results.md", tmp_path / "results.png")
    text = (tmp_path / "results.md").read_text()
    assert "UD English-EWT test set, seed 0:" in text
    assert "| accuracy | 90.00 | 95.00 | +5.00 |" in text
    assert "| POS | 0.200 | 0.300 | 0.500 | 1.000 |" in text


def test_variants_without_a_common_seed_are_an_error(compare, tmp_path):
    (tmp_path / "tagger-baseline.json").write_text(json.dumps(record("tagger-baseline", {1: 0.9})))
    (tmp_path / "tagger-elmo.json").write_text(json.dumps(record("tagger-elmo", {0: 0.95})))
    with pytest.raises(SystemExit, match="no seed in common"):
        compare.main(tmp_path, tmp_path / "results.md", tmp_path / "results.png")
