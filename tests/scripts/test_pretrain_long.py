"""scripts/pretrain_long.py: a run over several sittings, its snapshot (the weights outside the
snapshot folder, their sha256 in it), and the fallback to the snapshot's weights (found by their
sha256, e.g. the bundled copy) when the run's checkpoints are gone."""
import hashlib
import json
import shutil
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


def fail(*args: str) -> str:
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)
    assert done.returncode != 0, done.stdout[-2000:]
    return done.stdout + done.stderr


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_start_snapshot_resume_and_fallback_to_the_snapshot(tmp_path):
    snapshot, run_dir, models = tmp_path / "snapshot", tmp_path / "run", tmp_path / "models"
    snapshot.mkdir()
    recipe = {
        "text": [str(SAMPLE)],
        "architecture": ["--preset", "tiny"],
        "training": ["--batch-size", "4", "--unroll-steps", "5", "--negatives", "8", "--epochs", "0", "--max-steps", "3", "--log-every", "1"],
        "speed": [],
        "threads": 1,
    }
    (snapshot / "recipe.json").write_text(json.dumps(recipe))
    (snapshot / "LICENSE.md").write_text("# en_x: licence\n")
    out = long_run("run", str(run_dir), "--snapshot", str(snapshot), "--eval-every", "7")
    assert "--preset tiny" in out and out.index("--eval-every 7") > out.index("--max-steps 3")  # the last one wins
    # A later sitting resumes: the budget is reached, so it only writes the model.
    assert "--resume" in long_run("run", str(run_dir), "--snapshot", str(snapshot))
    long_run("snapshot", str(run_dir), str(snapshot))
    # The weights go to the run's folder; the snapshot (committed) records their sha256 and card.
    weights = run_dir / "snapshot"
    assert not (snapshot / "model").exists() and not list(snapshot.glob("*.safetensors"))
    record = json.loads((snapshot / "weights.json").read_text())
    assert record["card"]["steps"] == 3 == json.loads((weights / "pretrain.json").read_text())["steps"]
    assert set(record["files"]) == {"config.json", "model.safetensors", "vocab.txt"}
    for name, entry in record["files"].items():
        assert entry == {"sha256": sha256(weights / name), "bytes": (weights / name).stat().st_size}
    spec = json.loads((snapshot / "run.json").read_text())
    assert spec["train"] == [SAMPLE.name]  # no path of this machine
    assert (snapshot / "metrics.jsonl").is_file()
    snapshot_weights = load_bilm(weights).state_dict()
    # The machine lost the run: a new sitting continues from the snapshot's weights, for what is
    # left of the budget (none here, then 2 more steps).
    lost = tmp_path / "lost"
    assert "has reached the recipe's budget (3 steps" in long_run("run", str(lost), "--snapshot", str(snapshot), "--models-dir", str(models))
    assert not (snapshot / "history.json").exists()
    recipe["training"][recipe["training"].index("--max-steps") + 1] = "5"
    (snapshot / "recipe.json").write_text(json.dumps(recipe))
    # Where no folder holds weights matching weights.json, it says so and starts nothing.
    (tmp_path / "other").mkdir()
    error = fail("run", str(lost), "--snapshot", str(snapshot), "--weights", str(tmp_path / "other"), "--models-dir", str(models))
    assert "are in none of" in error and record["files"]["model.safetensors"]["sha256"] in error and "--weights FOLDER" in error
    assert not lost.exists() and not (snapshot / "history.json").exists()
    # The weights shipped in the package (bundle) are the snapshot's: found by their sha256.
    long_run("bundle", str(snapshot), "en_x", "--weights", str(weights), "--models-dir", str(models))
    out = long_run("run", str(lost), "--snapshot", str(snapshot), "--models-dir", str(models))
    assert f"--init {models / 'en_x'}" in out and "--preset" not in out and "--max-steps 2 " in out
    history = json.loads((snapshot / "history.json").read_text())
    assert history[0]["continued_from"]["steps"] == 3
    continued = load_bilm(lost / "model")
    assert continued.vocab == load_bilm(weights).vocab
    changed = [k for k, v in continued.state_dict().items() if not (v == snapshot_weights[k].to(v.dtype)).all()]
    assert changed  # it trained on from the snapshot's weights
    # Its snapshot counts the whole run: 3 steps before, 2 after; the curve goes on from step 3.
    error = fail("snapshot", str(lost), str(snapshot), "--weights-dir", str(snapshot / "model"))
    assert "the weights go outside the snapshot folder" in error and not (snapshot / "model").exists()
    long_run("snapshot", str(lost), str(snapshot), "--weights-dir", str(tmp_path / "weights-5"))
    card = json.loads((snapshot / "weights.json").read_text())["card"]
    assert card == json.loads((tmp_path / "weights-5" / "pretrain.json").read_text())
    assert card["steps"] == 5 and card["tokens"] == record["card"]["tokens"] * 5 // 3
    steps = [json.loads(line)["step"] for line in (snapshot / "metrics.jsonl").read_text().splitlines()]
    assert steps[:3] == [1, 2, 3] and steps[-1] == 5 and steps == sorted(steps)


def test_bundle_ships_a_snapshot_with_its_card_and_licence(tmp_path):
    snapshot, models = tmp_path / "snapshot", tmp_path / "models"
    snapshot.mkdir()
    weights = tmp_path / "run" / "snapshot"
    error = fail("bundle", str(snapshot), "en_x", "--weights", str(weights), "--models-dir", str(models))
    assert "is not a snapshot to bundle: missing" in error and "weights.json" in error
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
    # Weights that are not the ones weights.json records are refused.
    altered = tmp_path / "altered"
    shutil.copytree(weights, altered)
    with (altered / "vocab.txt").open("a") as file:
        file.write("extra\n")
    assert "does not hold the weights of" in fail("bundle", str(snapshot), "en_x", "--weights", str(altered), "--models-dir", str(models))
    assert not models.exists()
    assert "2 steps" in long_run("bundle", str(snapshot), "en_x", "--weights", str(weights), "--models-dir", str(models))
    card = json.loads((models / "en_x" / "pretrain.json").read_text())
    assert card == {"name": "en_x", "lang": "en", "license": "CC BY-SA 4.0", "steps": 2, "tokens": card["tokens"]} and card["tokens"] > 0
    assert (models / "en_x" / "LICENSE.md").read_text() == "# en_x: licence\n"
    record = json.loads((snapshot / "weights.json").read_text())["files"]
    assert all(sha256(models / "en_x" / name) == entry["sha256"] for name, entry in record.items())
    bundled, snapshotted = load_bilm(models / "en_x").state_dict(), load_bilm(weights).state_dict()
    assert all(bool((bundled[k] == v).all()) for k, v in snapshotted.items())
