"""Tune a training config on dev: one `spacy train` per combination of a small grid (seed 0),
ranked by the best dev score each run reached. Give the baseline and the ELMo config the same
grid, so that both get the same tuning effort.

    python scripts/tune_config.py configs/ner.cfg metrics/tune-ner-elmo.json \\
        --grid training.dropout=0.1,0.3 --grid components.ner.model.tok2vec.encode.depth=2,4 \\
        --paths.train corpus/ner/train.spacy --paths.dev corpus/ner/dev.spacy

Extra arguments go to every `spacy train` (paths, `--training.max_steps`, ...). The runs are
kept under `training/tune/<config name>/<combination>/`; the JSON lists every combination with
its best dev score, best first. Test data is never read.
"""
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import typer

app = typer.Typer(add_completion=False)


def parse_grid(grid: List[str]) -> List[Tuple[str, List[str]]]:
    """"key=a,b" → (key, [a, b]) for each --grid option."""
    parsed = []
    for item in grid:
        key, sep, values = item.partition("=")
        if not sep or not values:
            raise typer.BadParameter(f"expected KEY=V1,V2,..., got {item!r}", param_hint="--grid")
        parsed.append((key.strip(), [v.strip() for v in values.split(",")]))
    return parsed


def best_dev_score(model_dir: Path) -> Dict[str, float]:
    """The dev scores of model-best, as spaCy records them in its meta.json."""
    meta = json.loads((model_dir / "model-best" / "meta.json").read_text())
    return {key: value for key, value in meta["performance"].items() if isinstance(value, float)}


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def main(
    ctx: typer.Context,
    config: Path = typer.Argument(..., help="spaCy training config"),
    output: Path = typer.Argument(..., help="JSON file of the results"),
    grid: List[str] = typer.Option(..., help="KEY=V1,V2: a config setting and its values (repeatable)"),
    score: str = typer.Option("", help="The dev score to rank by (default: ents_f, tag_acc or coref_f, whichever the runs have)"),
    runs_dir: Path = typer.Option(Path("training/tune"), help="Folder for the runs"),
) -> None:
    """Run every combination of the grid and rank them by their best dev score."""
    axes = parse_grid(grid)
    results = []
    for values in itertools.product(*(options for _, options in axes)):
        setting = dict(zip((key for key, _ in axes), values))
        name = "_".join(f"{key.split('.')[-1]}={value}" for key, value in setting.items())
        out = runs_dir / config.stem / name
        command = [sys.executable, "-m", "spacy", "train", str(config), "--output", str(out), "--system.seed", "0"]
        for key, value in setting.items():
            command += [f"--{key}", value]
        command += ctx.args
        print(f"{name}: {' '.join(command[1:])}", flush=True)
        if subprocess.run(command).returncode != 0:
            raise SystemExit(f"error: spacy train failed for {name}")
        scores = best_dev_score(out)
        key = score or next(k for k in ("ents_f", "tag_acc", "coref_f") if k in scores)
        results.append({"setting": setting, "dev": scores, "rank_by": key, "value": scores[key]})
    results.sort(key=lambda r: -r["value"])
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"config": str(config), "grid": dict(axes), "runs": results}, indent=2))
    for result in results:
        print(f"{result['value']:.4f}  {result['setting']}")


if __name__ == "__main__":
    app()
