"""The project's `smoke` workflow (`spacy project run smoke`) runs the whole chain end to end."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_DIRS = {"corpus_dir": "corpus", "uner_dir": "uner-ewt", "ud_dir": "ud-ewt"}
DATA_FILES = [
    "corpus/train.txt.gz",
    "uner-ewt/en_ewt-ud-train.iob2",
    "uner-ewt/en_ewt-ud-dev.iob2",
    "uner-ewt/en_ewt-ud-test.iob2",
    "ud-ewt/en_ewt-ud-train.conllu.gz",
    "ud-ewt/en_ewt-ud-dev.conllu.gz",
    "ud-ewt/en_ewt-ud-test.conllu.gz",
]


def data_dir() -> Path:
    """The shared data: $SPACY_ELMO_DATA, else ../shared/data."""
    env = os.environ.get("SPACY_ELMO_DATA")
    return (Path(env) if env else REPO.parent / "shared" / "data").resolve()


def test_smoke_workflow(tmp_path):
    data = data_dir()
    missing = [name for name in DATA_FILES if not (data / name).is_file()]
    if missing:
        pytest.skip(f"shared data not found at {data} ({', '.join(missing)}); set SPACY_ELMO_DATA")
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "project.yml", project)
    for folder in ("configs", "scripts"):
        shutil.copytree(REPO / folder, project / folder)
    variables = []
    for var, name in DATA_DIRS.items():
        variables += [f"--vars.{var}", str(data / name)]
    command = [sys.executable, "-m", "spacy", "project", "run", "smoke", str(project), *variables]
    command += ["--vars.smoke_sentences", "200"]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, f"smoke workflow failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"

    bilm_config = json.loads((project / "smoke/training/bilm/model/config.json").read_text())
    assert bilm_config["storage_dtype"] == "float16-softmax"
    ner_elmo = json.loads((project / "smoke/metrics/ner-elmo.json").read_text())["runs"]
    ner_baseline = json.loads((project / "smoke/metrics/ner-baseline.json").read_text())["runs"]
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
