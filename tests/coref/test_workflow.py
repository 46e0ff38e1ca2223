"""The project's `coref-smoke` command on a few GUM documents, and the trained coreference
pipeline's behaviour: offline save/load and batching leave its clusters unchanged."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin

pytestmark = pytest.mark.slow

pytest.importorskip("spacy_experimental", reason="needs the `coref` extra")
pytest.importorskip("udapi", reason="needs the `coref` extra")

REPO = Path(__file__).resolve().parents[2]
GUM = (Path(os.environ.get("SPACY_ELMO_DATA", REPO.parent / "shared" / "data")) / "gum").resolve()


def clusters(doc):
    return {key: [(span.start, span.end) for span in group] for key, group in doc.spans.items()}


@pytest.fixture(scope="module")
def smoke_project(tmp_path_factory):
    if not any(GUM.glob("gum-train.conllu*")):
        pytest.skip(f"GUM not found at {GUM}; set SPACY_ELMO_DATA")
    project = tmp_path_factory.mktemp("coref") / "project"
    project.mkdir()
    for name in ("project.yml", "configs", "scripts", "data"):
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy)(REPO / name, project / name)
    command = [sys.executable, "-m", "spacy", "project", "run", "coref-smoke", str(project), "--vars.gum_dir", str(GUM)]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, f"coref-smoke failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return project / "smoke" / "coref"


def test_coref_smoke_trains_evaluates_and_compares_both_variants(smoke_project):
    elmo = json.loads((smoke_project / "metrics/coref-elmo.json").read_text())["runs"][0]
    baseline = json.loads((smoke_project / "metrics/coref-baseline.json").read_text())["runs"][0]
    for run in (elmo, baseline):
        for key in ("coref_conll_f", "coref_muc_f", "coref_b3_f", "coref_ceafe_f", "coref_f"):
            assert 0.0 <= run["scores"][key] <= 1.0
    assert baseline["layer_mix"] is None
    assert elmo["layer_mix"]["component"] == "coref" and len(elmo["layer_mix"]["weights"]) == 3
    results = (smoke_project / "metrics/results.md").read_text()
    assert "| CoNLL F1 |" in results and "| coreference |" in results


def test_a_trained_coref_pipeline_gives_the_same_clusters_after_saving_batched_or_not(smoke_project, tmp_path):
    # model-best of the smoke run is the untrained model (scored at step 0), which still links
    # many words: enough clusters to compare.
    nlp = spacy.load(smoke_project / "training/coref-elmo/seed0/model-best")
    assert nlp.pipe_names == ["sentencizer", "elmo", "coref", "span_resolver", "span_cleaner"]
    texts = [doc.text for doc in DocBin().from_disk(smoke_project / "corpus/test.spacy").get_docs(nlp.vocab)]
    one_by_one = [clusters(nlp(text)) for text in texts]
    assert sum(len(c) for c in one_by_one) > 0
    assert all(key.startswith("coref_clusters_") for c in one_by_one for key in c)
    assert [clusters(doc) for doc in nlp.pipe(texts, batch_size=2)] == one_by_one
    nlp.to_disk(tmp_path / "saved")
    env = {**os.environ, "SPACY_ELMO_OFFLINE": "1"}
    script = (
        "import json, sys, spacy\n"
        f"nlp = spacy.load({str(tmp_path / 'saved')!r})\n"
        f"texts = json.loads({json.dumps(json.dumps(texts))})\n"
        "docs = [nlp(t) for t in texts]\n"
        "print(json.dumps([{k: [[s.start, s.end] for s in g] for k, g in d.spans.items()} for d in docs]))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    reloaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert [{k: [tuple(s) for s in v] for k, v in c.items()} for c in reloaded] == one_by_one


def test_scoring_one_seed_keeps_the_other_seeds_of_the_record(smoke_project, tmp_path):
    baseline = smoke_project / "metrics/coref-baseline.json"
    record = json.loads(baseline.read_text())
    other = {**record["runs"][0], "seed": 7, "scores": {"coref_conll_f": 0.5}}
    output = tmp_path / "coref-baseline.json"
    output.write_text(json.dumps({**record, "runs": [other, {**record["runs"][0], "scores": {}}]}))
    command = [
        sys.executable, "scripts/evaluate_runs.py", "smoke/coref/training/coref-baseline",
        "smoke/coref/corpus/test.spacy", str(output), "--gold-tokens", "--seeds", "0",
    ]
    project = smoke_project.parent.parent
    result = subprocess.run(command, capture_output=True, text=True, cwd=project)
    assert result.returncode == 0, result.stderr[-3000:]
    merged = json.loads(output.read_text())
    assert [run["seed"] for run in merged["runs"]] == [0, 7]
    assert merged["runs"][0]["scores"] == record["runs"][0]["scores"]
    assert merged["runs"][1] == other
    mismatched = {**record, "test": "elsewhere/test.spacy", "runs": [other]}
    output.write_text(json.dumps(mismatched))
    result = subprocess.run(command, capture_output=True, text=True, cwd=project)
    assert result.returncode != 0 and "holds test 'elsewhere/test.spacy'" in result.stderr
