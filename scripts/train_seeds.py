"""Train one spaCy config once per seed: `spacy train CONFIG --output OUTPUT/seedN --system.seed N`.

Extra arguments are passed on to `spacy train` (e.g. `--paths.train corpus/ner/train.spacy`).

    python scripts/train_seeds.py configs/ner.cfg training/ner-elmo --seeds 0,1,2 --paths.train ...
"""

import subprocess
import sys
from pathlib import Path

import typer

app = typer.Typer(add_completion=False)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def main(
    ctx: typer.Context,
    config: Path = typer.Argument(..., help="spaCy training config"),
    output_dir: Path = typer.Argument(..., help="Folder for one seedN/ training output per seed"),
    seeds: str = typer.Option("0,1,2", help="Comma-separated seeds"),
) -> None:
    """Run `spacy train` for each seed, stopping at the first failure."""
    for seed in (int(s) for s in seeds.split(",")):
        command = [sys.executable, "-m", "spacy", "train", str(config), "--output", str(output_dir / f"seed{seed}")]
        command += ["--system.seed", str(seed), *ctx.args]
        print(f"seed {seed}: {' '.join(command[1:])}", flush=True)
        if subprocess.run(command).returncode != 0:
            raise SystemExit(f"error: spacy train failed for seed {seed}")


if __name__ == "__main__":
    app()
