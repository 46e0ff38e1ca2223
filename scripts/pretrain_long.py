"""A pretraining run of many hours over several sittings: start it, resume it, or, where its
checkpoints are gone, continue from the weights of its last snapshot; write that snapshot; ship it.

The run's folder (checkpoints with optimizer state) lives outside the repository, and so do the
snapshot's weights (by default the run's `snapshot/` folder, or `--weights-dir`); what gets
committed is the snapshot folder: the held-out curve, the run's settings, its history and
`weights.json`, the sha256 and size of each file of the weights (float16) with their model card.
`bundle` ships those weights in the package (spacy_elmo/models/NAME), after checking them
against `weights.json`.

    python scripts/pretrain_long.py run ~/elmo-runs/en-v2 --snapshot pretraining/en_base_v2 --max-time 2h
    python scripts/pretrain_long.py snapshot ~/elmo-runs/en-v2 pretraining/en_base_v2
    python scripts/pretrain_long.py bundle pretraining/en_base_v2 en_base_v2 --weights ~/elmo-runs/en-v2/snapshot

`run` resumes the run where it has a checkpoint; else, where the snapshot records weights, starts
a new run in the folder with `--init` from them for what is left of the recipe's budget (fresh
optimizer state, the text from its start: the fallback when the machine lost the run); the
weights are the first folder whose files match `weights.json`: `--weights`, the run's
`snapshot/`, or a bundled model (the shipped copy of the snapshot). Else it starts the run from
scratch with the recipe in the snapshot's `recipe.json`. A snapshot of a continued run counts the
steps and tokens before it: its curve and model card are the whole run's.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from spacy_elmo.bilm.loading import BUNDLED_DIR
from spacy_elmo.bilm.model_info import MODEL_INFO_FILE, write_model_info
from spacy_elmo.cli.pretrain import parse_count

app = typer.Typer(add_completion=False)
RECIPE_FILE = "recipe.json"
HISTORY_FILE = "history.json"
SNAPSHOT_FILES = ("run.json", "metrics.jsonl")
MODEL_FILES = ("config.json", "model.safetensors", "vocab.txt")
LICENSE_FILE = "LICENSE.md"
# In the snapshot folder: the sha256 and size of each of MODEL_FILES and the model card of the
# weights the snapshot wrote (which are not in that folder).
WEIGHTS_FILE = "weights.json"
# The weights' folder inside the run's folder, where `snapshot` writes them by default.
RUN_WEIGHTS_DIR = "snapshot"
METRICS_FILE = "metrics.jsonl"
# In the folder of a run continued from a snapshot: the steps and tokens trained before it, and
# the curve up to it.
BEFORE_FILE = "before.json"
BEFORE_METRICS_FILE = "metrics-before.jsonl"
BUDGETS = {"--max-steps": "steps", "--token-budget": "tokens"}


def _pretrain(args: List[str]) -> None:
    command = [sys.executable, "-m", "spacy_elmo", "pretrain", *args]
    print("$ " + " ".join(command), flush=True)
    code = subprocess.call(command)
    if code not in (0, 130):  # 130: stopped by a signal, with a checkpoint
        raise SystemExit(code)


def _left_of_budget(training: List[str], done: Dict[str, int]) -> Optional[List[str]]:
    """The recipe's training options with its step and token budgets less what `done` (a model
    card: "steps", "tokens") has trained; None where a budget is used up."""
    left = list(training)
    for option, key in BUDGETS.items():
        if option in left:
            at = left.index(option) + 1
            remaining = parse_count(left[at], option) - done[key]
            if remaining <= 0:
                return None
            left[at] = str(remaining)
    return left


def _has_checkpoint(run_dir: Path) -> bool:
    folder = run_dir / "checkpoints"
    return folder.is_dir() and any(folder.iterdir())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_record(folder: Path) -> Dict[str, Dict[str, Any]]:
    return {name: {"sha256": _sha256(folder / name), "bytes": (folder / name).stat().st_size} for name in MODEL_FILES}


def _read_weights(snapshot: Path) -> Optional[Dict[str, Any]]:
    """The snapshot's weights.json ({"card": the model card, "files": {name: {sha256, bytes}}}),
    None where it has none."""
    path = snapshot / WEIGHTS_FILE
    return json.loads(path.read_text(encoding="utf8")) if path.is_file() else None


def _matches(folder: Path, files: Dict[str, Dict[str, Any]]) -> bool:
    """Whether `folder` holds exactly the files that weights.json records (size first: cheap)."""
    paths = {name: folder / name for name in files}
    if not all(path.is_file() and path.stat().st_size == files[name]["bytes"] for name, path in paths.items()):
        return False
    return all(_sha256(path) == files[name]["sha256"] for name, path in paths.items())


def _find_weights(files: Dict[str, Dict[str, Any]], candidates: List[Path]) -> Optional[Path]:
    return next((folder for folder in candidates if _matches(folder, files)), None)


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


@app.command()
def run(
    run_dir: Path = typer.Argument(..., help="The run's folder, outside the repository"),
    snapshot: Path = typer.Option(..., help="Snapshot folder: recipe.json, and weights.json once written"),
    threads: Optional[int] = typer.Option(None, help="torch threads (default: the recipe's)"),
    max_time: Optional[str] = typer.Option(None, help="Stop this sitting after this long, e.g. 2h"),
    eval_every: Optional[int] = typer.Option(None, help="Score the held-out text every N steps (default: the recipe's)"),
    weights: Optional[Path] = typer.Option(None, help="A folder with the snapshot's weights (checked against weights.json), tried first"),
    models_dir: Path = typer.Option(BUNDLED_DIR, help="Bundled models: one matching weights.json is the snapshot's weights"),
) -> None:
    """Resume the run, continue it from the snapshot, or start it."""
    run_dir = run_dir.expanduser()  # spaCy projects run commands without a shell
    recipe = json.loads((snapshot / RECIPE_FILE).read_text(encoding="utf8"))
    budget = ["--max-time", max_time] if max_time else []
    # After the recipe's options: the last of a repeated option is the one that counts.
    cadence = ["--eval-every", str(eval_every)] if eval_every else []
    speed = ["--threads", str(threads or recipe["threads"]), "--quiet", *recipe["speed"], *cadence]
    if _has_checkpoint(run_dir):
        _pretrain([str(run_dir), "--resume", *speed, *budget])
    elif (recorded := _read_weights(snapshot)) is not None:
        info = recorded["card"]
        training = _left_of_budget(recipe["training"], info)
        if training is None:
            print(f"{snapshot} has reached the recipe's budget ({info['steps']:,} steps, {info['tokens']:,} tokens)")
            return
        candidates = [weights.expanduser()] if weights else []
        candidates.append(run_dir / RUN_WEIGHTS_DIR)
        candidates += sorted(p for p in models_dir.iterdir() if p.is_dir()) if models_dir.is_dir() else []
        found = _find_weights(recorded["files"], candidates)
        if found is None:
            sha = recorded["files"]["model.safetensors"]["sha256"]
            raise SystemExit(
                f"error: the weights of {snapshot} (step {info['steps']:,}; model.safetensors sha256 {sha}) are in none of "
                f"{', '.join(str(c) for c in candidates)}: pass --weights FOLDER, a copy of them (the `snapshot` output)"
            )
        history = json.loads((snapshot / HISTORY_FILE).read_text(encoding="utf8")) if (snapshot / HISTORY_FILE).is_file() else []
        history.append({"continued_from": info, "reason": "the run's folder had no checkpoint"})
        (snapshot / HISTORY_FILE).write_text(json.dumps(history, indent=2) + "\n", encoding="utf8")
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / BEFORE_FILE).write_text(json.dumps({"steps": info["steps"], "tokens": info["tokens"]}), encoding="utf8")
        if (snapshot / METRICS_FILE).is_file():
            shutil.copy2(snapshot / METRICS_FILE, run_dir / BEFORE_METRICS_FILE)
        print(f"continuing from {found} (the weights of {snapshot / WEIGHTS_FILE})", flush=True)
        _pretrain([str(run_dir), *recipe["text"], "--init", str(found), *training, *speed, *budget])
    else:
        _pretrain([str(run_dir), *recipe["text"], *recipe["architecture"], *recipe["training"], *speed, *budget])


@app.command()
def snapshot(
    run_dir: Path = typer.Argument(..., help="The run's folder"),
    output: Path = typer.Argument(..., help="Snapshot folder (committed): curve, settings, weights.json"),
    weights_dir: Optional[Path] = typer.Option(None, help="Where the weights go (replaced), outside the snapshot folder; default: RUN_DIR/snapshot"),
) -> None:
    """Write the run's newest checkpoint as a float16 model into `weights_dir` (outside the
    repository), and its curve, settings and the weights' sha256 and sizes (weights.json) into
    `output` (the run must not be training at the same time)."""
    run_dir = run_dir.expanduser()
    target = weights_dir.expanduser() if weights_dir else run_dir / RUN_WEIGHTS_DIR
    if _inside(target, output):
        raise SystemExit(f"error: the weights go outside the snapshot folder {output} (it is committed): {target}")
    checkpoints = sorted((run_dir / "checkpoints").glob("step-*"))
    if not checkpoints:
        raise SystemExit(f"error: {run_dir} has no checkpoint")
    step = int(checkpoints[-1].name.split("-")[1])
    # A budget already reached: the run writes model/ (and its held-out perplexity) and stops.
    _pretrain([str(run_dir), "--resume", "--max-steps", str(step), "--storage-dtype", "float16", "--quiet"])
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(run_dir / "model", target)
    output.mkdir(parents=True, exist_ok=True)
    for name in SNAPSHOT_FILES:
        if (run_dir / name).is_file():  # a run logs no metrics before its first --log-every steps
            shutil.copy2(run_dir / name, output / name)
    if (run_dir / BEFORE_FILE).is_file():
        _count_what_came_before(run_dir, output, target)
    # Paths in run.json name this machine's files: keep only their names.
    spec = json.loads((output / "run.json").read_text(encoding="utf8"))
    for key in ("train", "heldout", "init"):
        value = spec.get(key)
        if isinstance(value, list):
            spec[key] = [os.path.basename(v) for v in value]
        elif value:
            spec[key] = os.path.basename(value)
    (output / "run.json").write_text(json.dumps(spec, indent=2) + "\n", encoding="utf8")
    card = json.loads((target / MODEL_INFO_FILE).read_text(encoding="utf8"))
    record = {
        "note": "The float16 weights of this snapshot, kept outside the repository (`snapshot` writes them to the run's "
        "snapshot/ folder; `bundle` ships them in spacy_elmo/models/): sha256 and size of each file, and their model card.",
        "card": card,
        "files": _file_record(target),
    }
    (output / WEIGHTS_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf8")
    print(f"{output}: step {step}, weights {target} (model.safetensors sha256 {record['files']['model.safetensors']['sha256']})")


def _count_what_came_before(run_dir: Path, output: Path, weights: Path) -> None:
    """A run continued from a snapshot: its model card (in the weights' folder `weights`) and
    curve (in the snapshot `output`) count the steps and tokens trained before it, and the curve
    starts with the earlier one."""
    before = json.loads((run_dir / BEFORE_FILE).read_text(encoding="utf8"))
    card = json.loads((weights / MODEL_INFO_FILE).read_text(encoding="utf8"))
    write_model_info(weights, {**card, "steps": card["steps"] + before["steps"], "tokens": card["tokens"] + before["tokens"]})
    earlier = run_dir / BEFORE_METRICS_FILE
    lines = earlier.read_text(encoding="utf8").splitlines() if earlier.is_file() else []
    later = run_dir / METRICS_FILE
    for line in later.read_text(encoding="utf8").splitlines() if later.is_file() else []:
        row = json.loads(line)
        row.update(step=row["step"] + before["steps"], tokens=row["tokens"] + before["tokens"])
        lines.append(json.dumps(row))
    (output / METRICS_FILE).write_text("".join(line + "\n" for line in lines), encoding="utf8")


@app.command()
def bundle(
    snapshot: Path = typer.Argument(..., help="Snapshot folder: weights.json and LICENSE.md"),
    name: str = typer.Argument(..., help="The bundled model's short name, e.g. en_base_v2"),
    weights: Path = typer.Option(..., help="The snapshot's weights (`snapshot` wrote them: RUN_DIR/snapshot by default)"),
    license: str = typer.Option("CC BY-SA 4.0", help="The weights' licence, as the model card names it"),
    models_dir: Path = typer.Option(BUNDLED_DIR, help="Where the package's bundled models live"),
) -> None:
    """Ship the snapshot's weights inside the package as `name`: its weights, vocabulary and
    architecture (the files weights.json records, checked), its licence notice, and a model card
    naming it (spacy_elmo/models/NAME)."""
    weights = weights.expanduser()
    recorded, notice = _read_weights(snapshot), snapshot / LICENSE_FILE
    missing = [] if recorded is not None else [str(snapshot / WEIGHTS_FILE)]
    missing += [] if notice.is_file() else [str(notice)]
    missing += [str(weights / f) for f in (*MODEL_FILES, MODEL_INFO_FILE) if not (weights / f).is_file()]
    if missing:
        raise SystemExit(f"error: {snapshot} with {weights} is not a snapshot to bundle: missing {', '.join(missing)}")
    if not _matches(weights, recorded["files"]):
        raise SystemExit(f"error: {weights} does not hold the weights of {snapshot / WEIGHTS_FILE} (sha256 or size differ)")
    target = models_dir / name
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for file in MODEL_FILES:
        shutil.copy2(weights / file, target / file)
    shutil.copy2(notice, target / LICENSE_FILE)
    trained = recorded["card"]
    write_model_info(target, {"name": name, "lang": trained["lang"], "license": license, "steps": trained["steps"], "tokens": trained["tokens"]})
    print(f"{target}: {name}, {trained['tokens']:,} tokens ({trained['steps']:,} steps)")


if __name__ == "__main__":
    app()
