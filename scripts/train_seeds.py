"""Train one spaCy config once per seed: `spacy train CONFIG --output OUTPUT/seedN --system.seed N`.

Extra arguments are passed on to `spacy train` (e.g. `--paths.train corpus/ner/train.spacy`). A
finished seed leaves `seedN/done.json` (its command and minutes); with --resume such seeds are
skipped, so a queue stopped part-way goes on with the seed it had not finished (from its start:
`spacy train` does not resume within a run).

    python scripts/train_seeds.py configs/ner.cfg training/ner-elmo --seeds 0,1,2 [--resume] --paths.train ...
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import typer

app = typer.Typer(add_completion=False)
DONE = "done.json"


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def main(
    ctx: typer.Context,
    config: Path = typer.Argument(..., help="spaCy training config"),
    output_dir: Path = typer.Argument(..., help="Folder for one seedN/ training output per seed"),
    seeds: str = typer.Option("0,1,2", help="Comma-separated seeds"),
    resume: bool = typer.Option(False, "--resume", help=f"Skip the seeds whose output holds {DONE}"),
) -> None:
    """Run `spacy train` for each seed, stopping at the first failure."""
    for seed in (int(s) for s in seeds.split(",")):
        output = output_dir / f"seed{seed}"
        if resume and (output / DONE).is_file():
            print(f"seed {seed}: done already ({output / DONE})", flush=True)
            continue
        command = [sys.executable, "-m", "spacy", "train", str(config), "--output", str(output)]
        command += ["--system.seed", str(seed), *ctx.args]
        print(f"seed {seed}: {' '.join(command[1:])}", flush=True)
        start = time.time()
        if subprocess.run(command).returncode != 0:
            raise SystemExit(f"error: spacy train failed for seed {seed}")
        record = {"command": command[1:], "minutes": round((time.time() - start) / 60, 1)}
        (output / DONE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf8")


if __name__ == "__main__":
    app()
