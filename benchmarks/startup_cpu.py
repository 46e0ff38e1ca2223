"""CPU seconds (user + sys, of the process and its children) from a fresh interpreter to the first
doc of saved pipelines: `python -c "import spacy; nlp = spacy.load(PATH); nlp(TEXT)"`, runs of the
pipelines interleaved, median of `--repeats`. CPU time rather than wall-clock, so that the figures
hold on a machine busy with other work (they do not count waiting for a core).

    OMP_NUM_THREADS=1 python benchmarks/startup_cpu.py ORT_VENV/bin/python=ORT_PIPELINE .venv/bin/python=TORCH_PIPELINE
"""
import os
import resource
import statistics
import subprocess
from typing import Dict, List

import typer

TEXT = "We saw a play. Let us play chess."
app = typer.Typer(add_completion=False)


def cpu_seconds(python: str, pipeline: str, threads: int) -> float:
    """User + sys CPU seconds of one fresh interpreter loading `pipeline` and running one doc."""
    code = f"import spacy; nlp = spacy.load({pipeline!r}); nlp({TEXT!r})"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([python, "-c", code], check=True, env={**os.environ, "OMP_NUM_THREADS": str(threads)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


@app.command()
def main(
    runs: List[str] = typer.Argument(..., help="PYTHON=PIPELINE pairs: an interpreter and the saved pipeline it loads"),
    repeats: int = typer.Option(5, help="runs of each; the median counts"),
    threads: int = typer.Option(1, help="OMP_NUM_THREADS of the runs"),
) -> None:
    seconds: Dict[str, List[float]] = {run: [] for run in runs}
    for run in runs:  # warm the file cache and the bytecode caches
        cpu_seconds(*run.split("=", 1), threads)
    for _ in range(repeats):
        for run in runs:
            seconds[run].append(cpu_seconds(*run.split("=", 1), threads))
    medians = {run: statistics.median(values) for run, values in seconds.items()}
    for run, values in seconds.items():
        print(f"{run}: median {medians[run]:.3f} s CPU ({', '.join(f'{v:.3f}' for v in values)})")
    if len(runs) == 2:
        print(f"ratio first/second: {medians[runs[0]] / medians[runs[1]]:.3f}")


if __name__ == "__main__":
    app()
