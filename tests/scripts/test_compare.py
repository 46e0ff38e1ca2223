"""scripts/compare.py: tables pair the seeds both variants have."""
import json

import pytest

from . import load_script


@pytest.fixture(scope="module")
def compare():
    return load_script("compare")


def record(name, f1_by_seed, mix=None, bilm=None):
    runs = [{"seed": seed, "scores": {"tag_acc": f1}, "layer_mix": mix} for seed, f1 in f1_by_seed.items()]
    return {"model": f"training/{name}", "test": "test.spacy", "train": "train.spacy", "bilm": bilm, "runs": runs}


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


def write(tmp_path, name, f1_by_seed, mix=None, bilm=None):
    (tmp_path / f"{name}.json").write_text(json.dumps(record(name, f1_by_seed, mix, bilm)))


def test_four_variants_side_by_side_with_the_gains_over_each_baseline(compare, tmp_path):
    mix = {"component": "tagger", "weights": [0.2, 0.3, 0.5], "gamma": 1.0}
    write(tmp_path, "tagger-baseline", {0: 0.90, 1: 0.90})
    write(tmp_path, "tagger-baseline-vectors", {0: 0.92, 1: 0.92})
    write(tmp_path, "tagger-elmo", {0: 0.95, 1: 0.95}, mix)
    write(tmp_path, "tagger-elmo-vectors", {0: 0.96, 1: 0.96}, mix)
    compare.main(tmp_path, tmp_path / "results.md", tmp_path / "results.png")
    text = (tmp_path / "results.md").read_text()
    header = "|  | baseline | baseline + vectors | ELMo | ELMo + vectors | ELMo − baseline | ELMo − (baseline + vectors) | (ELMo + vectors) − (baseline + vectors) |"
    assert header in text
    assert "| accuracy | 90.00 ± 0.00 | 92.00 ± 0.00 | 95.00 ± 0.00 | 96.00 ± 0.00 | +5.00 | +3.00 | +4.00 |" in text
    assert "| POS + vectors | 0.200 | 0.300 | 0.500 | 1.000 |" in text


def test_a_vectors_variant_joins_once_it_has_the_seeds_of_the_pair(compare, tmp_path):
    write(tmp_path, "tagger-baseline", {0: 0.90, 1: 0.92})
    write(tmp_path, "tagger-elmo", {0: 0.95, 1: 0.95}, {"component": "tagger", "weights": [0.2, 0.3, 0.5], "gamma": 1.0})
    write(tmp_path, "tagger-baseline-vectors", {0: 0.93})
    compare.main(tmp_path, tmp_path / "results.md", tmp_path / "results.png")
    text = (tmp_path / "results.md").read_text()
    assert "mean ± sd over 2 seeds (0, 1):" in text
    assert "|  | baseline | ELMo | ELMo − baseline |" in text
    assert "Not shown yet: baseline + vectors has seeds 0 of 0, 1." in text


@pytest.mark.parametrize("task,expected", [("ner", "all 200 train sentences"), ("ner-low", "the first 200 train sentences"),
                                           ("ner-low-random", "a random sample (all genres) of 200 train sentences")])  # fmt: skip
def test_ner_tables_say_what_their_runs_were_trained_on(compare, task, expected):
    assert compare.training_set(task, 200) == expected


def test_a_second_bilm_is_compared_with_the_baselines_of_another_folder(compare, tmp_path):
    mix = {"component": "tagger", "weights": [0.2, 0.3, 0.5], "gamma": 1.0}
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir(), second.mkdir()
    write(first, "tagger-baseline", {0: 0.90})
    write(first, "tagger-baseline-vectors", {0: 0.92})
    write(first, "tagger-elmo", {0: 0.95}, mix, "en_base")
    write(second, "tagger-elmo", {0: 0.97}, mix, "en_base_v2")
    with pytest.raises(SystemExit, match="no baseline/ELMo pair"):
        compare.main(second, tmp_path / "results.md", tmp_path / "results.png")
    compare.main(second, tmp_path / "results.md", tmp_path / "results.png", baselines=first)
    text = (tmp_path / "results.md").read_text()
    assert text.startswith("ELMo features from the biLM en_base_v2.")
    assert "| accuracy | 90.00 | 92.00 | 97.00 | +7.00 | +5.00 |" in text
