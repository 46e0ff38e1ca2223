"""scripts/pretrain_long.py: a run over several sittings, its snapshot, and the fallback to the
snapshot when the run's checkpoints are gone."""
import json
import subprocess
import sys
from pathlib import Path

from spacy_elmo.bilm import load_bilm

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "pretrain_long.py"
SAMPLE = REPO / "data" / "smoke" / "corpus" / "train.txt.gz"


def long_run(*args: str) -> str:
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_start_snapshot_resume_and_fallback_to_the_snapshot(tmp_path):
    snapshot, run_dir = tmp_path / "snapshot", tmp_path / "run"
    snapshot.mkdir()
    recipe = {
        "text": [str(SAMPLE)],
        "architecture": ["--preset", "tiny"],
        "training": ["--batch-size", "4", "--unroll-steps", "5", "--negatives", "8", "--epochs", "0", "--max-steps", "3", "--log-every", "1"],
        "speed": [],
        "threads": 1,
    }
    (snapshot / "recipe.json").write_text(json.dumps(recipe))
    out = long_run("run", str(run_dir), "--snapshot", str(snapshot), "--eval-every", "7")
    assert "--preset tiny" in out and out.index("--eval-every 7") > out.index("--max-steps 3")  # the last one wins
    # A later sitting resumes: the budget is reached, so it only writes the model.
    assert "--resume" in long_run("run", str(run_dir), "--snapshot", str(snapshot))
    long_run("snapshot", str(run_dir), str(snapshot))
    info = json.loads((snapshot / "model" / "pretrain.json").read_text())
    assert info["steps"] == 3
    spec = json.loads((snapshot / "run.json").read_text())
    assert spec["train"] == [SAMPLE.name]  # no path of this machine
    assert (snapshot / "metrics.jsonl").is_file()
    snapshot_weights = load_bilm(snapshot / "model").state_dict()
    # The machine lost the run: a new sitting continues from the committed weights, for what is
    # left of the budget (none here, then 2 more steps).
    lost = tmp_path / "lost"
    assert "has reached the recipe's budget (3 steps" in long_run("run", str(lost), "--snapshot", str(snapshot))
    assert not (snapshot / "history.json").exists()
    recipe["training"][recipe["training"].index("--max-steps") + 1] = "5"
    (snapshot / "recipe.json").write_text(json.dumps(recipe))
    out = long_run("run", str(lost), "--snapshot", str(snapshot))
    assert "--init" in out and "--preset" not in out and "--max-steps 2 " in out
    history = json.loads((snapshot / "history.json").read_text())
    assert history[0]["continued_from"]["steps"] == 3
    continued = load_bilm(lost / "model")
    assert continued.vocab == load_bilm(snapshot / "model").vocab
    changed = [k for k, v in continued.state_dict().items() if not (v == snapshot_weights[k].to(v.dtype)).all()]
    assert changed  # it trained on from the snapshot's weights
    # Its snapshot counts the whole run: 3 steps before, 2 after; the curve goes on from step 3.
    before = json.loads((snapshot / "model" / "pretrain.json").read_text())
    long_run("snapshot", str(lost), str(snapshot))
    card = json.loads((snapshot / "model" / "pretrain.json").read_text())
    assert card["steps"] == 5 and card["tokens"] == before["tokens"] * 5 // 3
    steps = [json.loads(line)["step"] for line in (snapshot / "metrics.jsonl").read_text().splitlines()]
    assert steps[:3] == [1, 2, 3] and steps[-1] == 5 and steps == sorted(steps)


def test_bundle_ships_a_snapshot_with_its_card_and_licence(tmp_path):
    snapshot, models = tmp_path / "snapshot", tmp_path / "models"
    snapshot.mkdir()
    error = subprocess.run([sys.executable, str(SCRIPT), "bundle", str(snapshot), "en_x", "--models-dir", str(models)], capture_output=True, text=True)
    assert error.returncode != 0 and "is not a snapshot to bundle: missing" in error.stdout + error.stderr
    assert not models.exists()
    run_dir = tmp_path / "run"
    recipe = {
        "text": [str(SAMPLE)],
        "architecture": ["--preset", "tiny"],
        "training": ["--batch-size", "4", "--unroll-steps", "5", "--negatives", "8", "--epochs", "0", "--max-steps", "2"],
        "speed": [],
        "threads": 1,
    }
    (snapshot / "recipe.json").write_text(json.dumps(recipe))
    (snapshot / "LICENSE.md").write_text("# en_x: licence\n")
    long_run("run", str(run_dir), "--snapshot", str(snapshot))
    long_run("snapshot", str(run_dir), str(snapshot))
    assert "2 steps" in long_run("bundle", str(snapshot), "en_x", "--models-dir", str(models))
    card = json.loads((models / "en_x" / "pretrain.json").read_text())
    assert card == {"name": "en_x", "lang": "en", "license": "CC BY-SA 4.0", "steps": 2, "tokens": card["tokens"]} and card["tokens"] > 0
    assert (models / "en_x" / "LICENSE.md").read_text() == "# en_x: licence\n"
    bundled, snapshotted = load_bilm(models / "en_x").state_dict(), load_bilm(snapshot / "model").state_dict()
    assert all(bool((bundled[k] == v).all()) for k, v in snapshotted.items())
