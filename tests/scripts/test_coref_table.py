"""scripts/coref_table.py: means over seeds, gains over the seeds both systems have, LEA from
either scorer."""
import json

import pytest

from . import load_script

KEYS = ("conll", "muc_p", "muc_r", "muc_f", "b3_p", "b3_r", "b3_f", "ceafe_p", "ceafe_r", "ceafe_f")


@pytest.fixture(scope="module")
def coref_table():
    return load_script("coref_table")


def record(conll_by_seed, lea_key="coref_lea_f"):
    runs = []
    for seed, f1 in conll_by_seed.items():
        scores = {f"coref_{key}": f1 for key in KEYS if key != "conll"}
        runs.append({"seed": seed, "scores": {**scores, "coref_conll_f": f1, lea_key: f1 / 2}, "layer_mix": None})
    return {"model": "training/x", "test": "test.spacy", "runs": runs}


def test_the_table_pairs_seeds_and_reads_either_lea(coref_table, tmp_path):
    paths = []
    for name, data in {"a": record({0: 0.60, 1: 0.62}), "b": record({0: 0.50, 2: 0.40}), "c": record({0: 0.30}, "coref_f")}.items():
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(data))
    coref_table.main(paths[0], paths[1], names="A,B", extra=[paths[2]], extra_names="C", output=tmp_path / "t.md")
    lines = (tmp_path / "t.md").read_text().splitlines()
    conll = next(line for line in lines if line.startswith("| CoNLL F1 "))
    assert conll == "| CoNLL F1 | 61.00 ± 1.41 | 45.00 ± 7.07 | 30.00 | +10.00 |"  # the gain: seed 0 only
    assert next(line for line in lines if line.startswith("| LEA F1 ")) == "| LEA F1 | 30.50 ± 0.71 | 22.50 ± 3.54 | 15.00 | +5.00 |"


def test_missing_inputs_are_one_line(coref_table, tmp_path):
    with pytest.raises(SystemExit, match="no such file: .*nothing.json"):
        coref_table.main(tmp_path / "nothing.json", tmp_path / "nothing.json", names="A,B", extra=None, extra_names="", output=None)
