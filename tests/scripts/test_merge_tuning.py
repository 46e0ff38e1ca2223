"""scripts/merge_tuning.py: tuning runs of one combination each, merged and ranked."""
import json

import pytest

from . import load_script


@pytest.fixture(scope="module")
def merge_tuning():
    return load_script("merge_tuning")


def part(dropout, depth, value, config="configs/ner.cfg"):
    setting = {"training.dropout": dropout, "components.ner.model.tok2vec.encode.depth": depth}
    run = {"setting": setting, "dev": {"ents_f": value}, "rank_by": "ents_f", "value": value}
    return {"config": config, "grid": {key: [v] for key, v in setting.items()}, "runs": [run]}


def test_parts_merge_into_one_ranking_and_the_best_setting_is_printed(merge_tuning, tmp_path, capsys):
    paths = []
    for i, (dropout, depth, value) in enumerate([("0.1", "2", 0.60), ("0.3", "4", 0.64), ("0.1", "4", 0.62)]):
        paths.append(tmp_path / f"{i}.json")
        paths[-1].write_text(json.dumps(part(dropout, depth, value)))
    merge_tuning.main(tmp_path / "merged.json", paths)
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged["grid"] == {"training.dropout": ["0.1", "0.3"], "components.ner.model.tok2vec.encode.depth": ["2", "4"]}
    assert [run["value"] for run in merged["runs"]] == [0.64, 0.62, 0.60]
    assert capsys.readouterr().out.strip() == "--training.dropout 0.3 --components.ner.model.tok2vec.encode.depth 4"


def test_parts_of_different_configs_are_an_error(merge_tuning):
    with pytest.raises(SystemExit, match="different configs"):
        merge_tuning.merge([part("0.1", "2", 0.6), part("0.3", "2", 0.6, config="configs/other.cfg")])
