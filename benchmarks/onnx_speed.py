"""The `elmo` component on torch against ONNX Runtime: words/second of `nlp.pipe`, the time from a
fresh interpreter to the first doc, and what each runtime adds to an installation.

Four variants of one biLM (`--model`: a bundled name or model folder; or `--size original`:
random weights of the published original architecture, as `bilm_speed.py` writes them): torch
float32, torch int8, ONNX Runtime float32 and ONNX Runtime int8 (`runtime = "onnxruntime"`).
Each pass runs `nlp.pipe` over the same raw corpus lines; passes alternate between the variants,
each one cold (the token cache of the torch biLM or of `OnnxBiLM` cleared) then warm (right
after the cold one); best of `--repeats`. Both runtimes get `--threads` threads.

Start-up: a fresh `python -c "import spacy; nlp = spacy.load(PATH); nlp(TEXT)"` for a saved
float32 pipeline of each runtime, best of `--repeats`: the torch pipeline; the ONNX Runtime
pipeline where torch is importable (spaCy's thinc imports torch when it is installed); and the
ONNX Runtime pipeline where it is not (`import torch` fails, as in an installation of the `onnx`
extra alone). Installed size: the files of torch, of onnxruntime and of onnx, each with the
packages it pulls in that spaCy does not already need, as installed in this environment.

    python benchmarks/onnx_speed.py --model en_base_v2 --threads 1
    python benchmarks/onnx_speed.py --size original --sentences 128 --threads 2
"""
import os
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Set, Tuple

import typer
from bilm_speed import DEFAULT_CORPUS, read_lines, write_random_weights

VARIANTS: Dict[str, Tuple[str, str]] = {
    "torch float32": ("torch", "float32"),
    "torch int8": ("torch", "int8"),
    "ORT float32": ("onnxruntime", "float32"),
    "ORT int8": ("onnxruntime", "int8"),
}
START_TEXT = "We saw a play. Let us play chess."
NO_TORCH = "import sys; sys.modules['torch'] = None; "  # `import torch` raises ImportError

app = typer.Typer(add_completion=False)


def timed(run: Callable[[], object]) -> float:
    """Seconds one call of `run` takes."""
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def start_seconds(python_prefix: str, pipeline: Path, threads: int, repeats: int) -> float:
    """Best seconds from starting a fresh interpreter to its first doc of a saved pipeline."""
    code = f"{python_prefix}import spacy; nlp = spacy.load({str(pipeline)!r}); nlp({START_TEXT!r})"
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=pipeline.parent)
        best = min(best, time.perf_counter() - start)
    return best


def requirement_closure(names: Iterable[str]) -> Set[str]:
    """The installed distributions `names` need, themselves included (no extras), lower-cased."""
    from packaging.requirements import Requirement

    found: Set[str] = set()
    todo = [name.lower() for name in names]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        found.add(name)
        for line in requires:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name.lower().replace("_", "-"))
    return found


def installed_mb(names: Iterable[str]) -> float:
    """MB of the files (their RECORD) of installed distributions."""
    total = 0
    for name in names:
        for file in metadata.distribution(name).files or []:
            path = Path(file.locate())
            total += path.stat().st_size if path.is_file() else 0
    return total / 2**20


def added_by(package: str) -> Tuple[float, List[str]]:
    """MB and names of `package` and what it pulls in beyond spaCy's own requirements."""
    names = sorted(requirement_closure([package]) - requirement_closure(["spacy"]))
    return installed_mb(names), names


@app.command()
def main(
    model: str = typer.Option("", help="a bundled model's name or a model folder (instead of --size)"),
    size: str = typer.Option("original", help="with no --model: random weights of this preset (small, medium, original)"),
    sentences: int = typer.Option(200, help="how many corpus lines to embed"),
    corpus: Path = typer.Option(DEFAULT_CORPUS, help="text, a sentence a line (.txt or .gz); default: the 200-line sample in data/smoke"),
    repeats: int = typer.Option(3, help="timed passes per variant and start-ups per runtime; the fastest counts"),
    threads: int = typer.Option(1, help="torch and ONNX Runtime threads"),
) -> None:
    os.environ["OMP_NUM_THREADS"] = str(threads)  # ONNX Runtime's threads in a pipeline follow it
    import spacy
    import torch

    from int8_speed import machine

    torch.set_num_threads(threads)
    texts = read_lines(corpus, sentences)
    with tempfile.TemporaryDirectory(prefix="onnx-speed-") as folder:
        tmp = Path(folder)
        block = {"bilm": model, "device": "cpu"}
        if not model:
            write_random_weights(size, tmp)
            block = {"bilm": str(tmp / "weights.hdf5"), "options": str(tmp / "options.json"), "device": "cpu"}
        pipelines = {}
        for name, (runtime, compute_dtype) in VARIANTS.items():
            nlp = spacy.blank("en")
            nlp.add_pipe("elmo", config={"model": {**block, "runtime": runtime, "compute_dtype": compute_dtype}})
            nlp.initialize()
            pipelines[name] = nlp
        for name in ("torch float32", "ORT float32"):
            pipelines[name].to_disk(tmp / name.replace(" ", "-"))
        n_words = sum(1 for doc in pipelines["torch float32"].tokenizer.pipe(texts) for token in doc if not token.is_space)
        for nlp in pipelines.values():  # warm up each runtime once
            list(nlp.pipe(texts[:8]))
        seconds = {(name, state): float("inf") for name in VARIANTS for state in ("cold", "warm")}
        for _ in range(repeats):
            for name, nlp in pipelines.items():
                elmo = nlp.get_pipe("elmo")
                if hasattr(elmo.bilm, "token_cache"):  # torch
                    elmo.bilm.token_cache.clear()
                if hasattr(elmo.bilm, "clear_cache"):  # ONNX Runtime
                    elmo.bilm.clear_cache()
                for state in ("cold", "warm"):
                    seconds[name, state] = min(seconds[name, state], timed(lambda: list(nlp.pipe(texts))))
        starts = {
            "torch pipeline": start_seconds("", tmp / "torch-float32", threads, repeats),
            "ORT pipeline, torch importable": start_seconds("", tmp / "ORT-float32", threads, repeats),
            "ORT pipeline, torch not importable": start_seconds(NO_TORCH, tmp / "ORT-float32", threads, repeats),
        }
    import onnxruntime

    info = machine()
    print(f"{'model=' + model if model else 'size=' + size} lines={len(texts)} words={n_words} threads={threads} best of {repeats}")
    print(f"cpu: {info['cpu']}; torch {torch.__version__}, onnxruntime {onnxruntime.__version__}; torch int8 engine: {info['int8_engine']}; "
          f"load average {info['load_average']}")
    print(f"{'variant':<34} {'cold words/s':>13} {'warm words/s':>13}")
    for name in VARIANTS:
        cold, warm = (n_words / seconds[name, state] for state in ("cold", "warm"))
        print(f"{name:<34} {cold:>13.1f} {warm:>13.1f}")
    print(f"{'start to first doc (fresh python)':<34} {'seconds':>13}")
    for name, value in starts.items():
        print(f"{name:<34} {value:>13.2f}")
    print(f"{'installed (this environment)':<34} {'MB':>13}")
    for package in ("torch", "onnxruntime", "onnx"):
        mb, names = added_by(package)
        print(f"{package + ' and what it adds':<34} {mb:>13.1f}  ({', '.join(names)})")


if __name__ == "__main__":
    app()
