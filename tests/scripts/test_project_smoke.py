"""The project's `smoke` workflow (`spacy project run smoke`) runs the whole chain end to end."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PROJECT_FILES = ("project.yml", "configs", "scripts", "data")


def bare_project(tmp_path: Path) -> Path:
    """The project's own files in a fresh folder, as on a clone without ../shared."""
    project = tmp_path / "project"
    project.mkdir()
    for name in PROJECT_FILES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, project / name)
        else:
            shutil.copy(REPO / name, project)
    return project


def test_all_workflow_without_data_names_the_variable_to_set(tmp_path):
    project = bare_project(tmp_path)
    command = [sys.executable, "-m", "spacy", "project", "run", "check-data", str(project), "--vars.uner_dir", str(tmp_path / "none")]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode != 0
    assert "Set --vars.uner_dir" in result.stdout + result.stderr and "en_ewt-ud-train.iob2" in result.stdout + result.stderr


def test_smoke_workflow_runs_on_a_bare_clone(tmp_path):
    project = bare_project(tmp_path)
    command = [sys.executable, "-m", "spacy", "project", "run", "smoke", str(project)]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, f"smoke workflow failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"

    bilm_config = json.loads((project / "smoke/training/bilm/model/config.json").read_text())
    assert bilm_config["storage_dtype"] == "float16-softmax"
    ner_elmo_record = json.loads((project / "smoke/metrics/ner-elmo.json").read_text())
    ner_baseline_record = json.loads((project / "smoke/metrics/ner-baseline.json").read_text())
    # Each record names the biLM of its features: the smoke biLM has no model card, so its path.
    assert ner_elmo_record["bilm"] == "smoke/training/bilm/model" and ner_baseline_record["bilm"] is None
    ner_elmo, ner_baseline = ner_elmo_record["runs"], ner_baseline_record["runs"]
    mix = ner_elmo[0]["layer_mix"]
    assert len(mix["weights"]) == 3 and abs(sum(mix["weights"]) - 1.0) < 1e-5
    assert ner_baseline[0]["layer_mix"] is None
    assert 0.0 <= ner_elmo[0]["scores"]["ents_f"] <= 1.0
    tagger = json.loads((project / "smoke/metrics/tagger-elmo.json").read_text())["runs"]
    assert 0.0 < tagger[0]["scores"]["tag_acc"] <= 1.0
    results = (project / "smoke/metrics/results.md").read_text()
    for row in ("| micro |", "| LOC |", "| PER |", "| accuracy |", "| NER |", "| POS |"):
        assert row in results
    assert (project / "smoke/metrics/results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
