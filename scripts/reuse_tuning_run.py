"""Use a tuning run (scripts/tune_config.py, seed 0) as seed 0 of the final runs when the config it
was trained with is exactly the shipped config with the same overrides; exit 1 otherwise.

    python scripts/reuse_tuning_run.py configs/ner.cfg "training/tune/ner/dropout=0.1_depth=2" \\
        training/ner-elmo/seed0 --paths.train corpus/ner/train.spacy --paths.dev corpus/ner/dev.spacy
"""
import shutil
from pathlib import Path

import typer
from spacy.cli._util import parse_config_overrides
from spacy.util import load_config

app = typer.Typer(add_completion=False)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def main(
    ctx: typer.Context,
    config: Path = typer.Argument(..., help="The shipped training config"),
    tuning_run: Path = typer.Argument(..., help="A training output of scripts/tune_config.py"),
    output: Path = typer.Argument(..., help="Where the run goes, e.g. training/ner-elmo/seed0"),
) -> None:
    """Copy `tuning_run` to `output` if its config equals `config` with the given overrides and seed 0."""
    overrides = {**parse_config_overrides(ctx.args), "system.seed": 0}
    wanted = load_config(config, overrides=overrides, interpolate=True)
    used = load_config(tuning_run / "model-best" / "config.cfg", interpolate=True)
    if wanted != used:
        raise SystemExit(f"{tuning_run} was trained with another config than {config}: not reused")
    shutil.copytree(tuning_run, output)
    print(f"{output}: the tuning run {tuning_run} (same config, seed 0)")


if __name__ == "__main__":
    app()
