"""A pretraining run of many hours over several sittings: start it, resume it, or, where its
checkpoints are gone, continue from the last committed snapshot; and write that snapshot.

The run's folder (checkpoints with optimizer state) lives outside the repository; the snapshot
(the latest weights in float16, the held-out curve and the run's settings) is what gets committed.

    python scripts/pretrain_long.py run ~/elmo-runs/en-v2 --snapshot pretraining/en_base_v2 --max-time 2h
    python scripts/pretrain_long.py snapshot ~/elmo-runs/en-v2 pretraining/en_base_v2
    python scripts/pretrain_long.py bundle pretraining/en_base_v2 en_base_v2

`run` resumes the run where it has a checkpoint; else, where the snapshot holds a model, starts a
new run in the folder with `--init` from it for what is left of the recipe's budget (fresh
optimizer state, the text from its start: the fallback when the machine lost the run); else
starts the run from scratch with the recipe in the snapshot's `recipe.json`. A snapshot of a
continued run counts the steps and tokens before it: its curve and model card are the whole run's.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

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


@app.command()
def run(
    run_dir: Path = typer.Argument(..., help="The run's folder, outside the repository"),
    snapshot: Path = typer.Option(..., help="Snapshot folder: recipe.json, and model/ once written"),
    threads: Optional[int] = typer.Option(None, help="torch threads (default: the recipe's)"),
    max_time: Optional[str] = typer.Option(None, help="Stop this sitting after this long, e.g. 2h"),
    eval_every: Optional[int] = typer.Option(None, help="Score the held-out text every N steps (default: the recipe's)"),
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
    elif (snapshot / "model" / "config.json").is_file():
        history = json.loads((snapshot / HISTORY_FILE).read_text(encoding="utf8")) if (snapshot / HISTORY_FILE).is_file() else []
        info = json.loads((snapshot / "model" / "pretrain.json").read_text(encoding="utf8"))
        training = _left_of_budget(recipe["training"], info)
        if training is None:
            print(f"{snapshot / 'model'} has reached the recipe's budget ({info['steps']:,} steps, {info['tokens']:,} tokens)")
            return
        history.append({"continued_from": info, "reason": "the run's folder had no checkpoint"})
        (snapshot / HISTORY_FILE).write_text(json.dumps(history, indent=2) + "\n", encoding="utf8")
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / BEFORE_FILE).write_text(json.dumps({"steps": info["steps"], "tokens": info["tokens"]}), encoding="utf8")
        if (snapshot / METRICS_FILE).is_file():
            shutil.copy2(snapshot / METRICS_FILE, run_dir / BEFORE_METRICS_FILE)
        _pretrain([str(run_dir), *recipe["text"], "--init", str(snapshot / "model"), *training, *speed, *budget])
    else:
        _pretrain([str(run_dir), *recipe["text"], *recipe["architecture"], *recipe["training"], *speed, *budget])


@app.command()
def snapshot(
    run_dir: Path = typer.Argument(..., help="The run's folder"),
    output: Path = typer.Argument(..., help="Snapshot folder (model/ is replaced)"),
) -> None:
    """Write the run's newest checkpoint as a float16 model with its curve into `output`
    (the run must not be training at the same time)."""
    run_dir = run_dir.expanduser()
    checkpoints = sorted((run_dir / "checkpoints").glob("step-*"))
    if not checkpoints:
        raise SystemExit(f"error: {run_dir} has no checkpoint")
    step = int(checkpoints[-1].name.split("-")[1])
    # A budget already reached: the run writes model/ (and its held-out perplexity) and stops.
    _pretrain([str(run_dir), "--resume", "--max-steps", str(step), "--storage-dtype", "float16", "--quiet"])
    target = output / "model"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(run_dir / "model", target)
    for name in SNAPSHOT_FILES:
        if (run_dir / name).is_file():  # a run logs no metrics before its first --log-every steps
            shutil.copy2(run_dir / name, output / name)
    if (run_dir / BEFORE_FILE).is_file():
        _count_what_came_before(run_dir, output)
    # Paths in run.json name this machine's files: keep only their names.
    spec = json.loads((output / "run.json").read_text(encoding="utf8"))
    for key in ("train", "heldout", "init"):
        value = spec.get(key)
        if isinstance(value, list):
            spec[key] = [os.path.basename(v) for v in value]
        elif value:
            spec[key] = os.path.basename(value)
    (output / "run.json").write_text(json.dumps(spec, indent=2) + "\n", encoding="utf8")
    print(f"{output}: step {step}, model {target}")


def _count_what_came_before(run_dir: Path, output: Path) -> None:
    """A run continued from a snapshot: its model card and curve in the snapshot `output` count
    the steps and tokens trained before it, and the curve starts with the earlier one."""
    before = json.loads((run_dir / BEFORE_FILE).read_text(encoding="utf8"))
    card = json.loads((output / "model" / MODEL_INFO_FILE).read_text(encoding="utf8"))
    write_model_info(output / "model", {**card, "steps": card["steps"] + before["steps"], "tokens": card["tokens"] + before["tokens"]})
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
    snapshot: Path = typer.Argument(..., help="Snapshot folder: model/ and LICENSE.md"),
    name: str = typer.Argument(..., help="The bundled model's short name, e.g. en_base_v2"),
    license: str = typer.Option("CC BY-SA 4.0", help="The weights' licence, as the model card names it"),
    models_dir: Path = typer.Option(BUNDLED_DIR, help="Where the package's bundled models live"),
) -> None:
    """Ship the snapshot's model inside the package as `name`: its weights, vocabulary and
    architecture, its licence notice, and a model card naming it (spacy_elmo/models/NAME)."""
    model, notice = snapshot / "model", snapshot / LICENSE_FILE
    missing = [str(model / f) for f in (*MODEL_FILES, MODEL_INFO_FILE) if not (model / f).is_file()]
    missing += [] if notice.is_file() else [str(notice)]
    if missing:
        raise SystemExit(f"error: {snapshot} is not a snapshot to bundle: missing {', '.join(missing)}")
    target = models_dir / name
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for file in MODEL_FILES:
        shutil.copy2(model / file, target / file)
    shutil.copy2(notice, target / LICENSE_FILE)
    trained = json.loads((model / MODEL_INFO_FILE).read_text(encoding="utf8"))
    write_model_info(target, {"name": name, "lang": trained["lang"], "license": license, "steps": trained["steps"], "tokens": trained["tokens"]})
    print(f"{target}: {name}, {trained['tokens']:,} tokens ({trained['steps']:,} steps)")


if __name__ == "__main__":
    app()
