"""Words/second of trained pipelines end to end (`nlp.pipe` on raw text), side by side, and
where the time goes: seconds per component.

Each pipeline is given as NAME=PATH[:int8|:onnx-int8]; `:int8` loads it with the biLM computing
in int8 on torch (`components.elmo.model.compute_dtype`, or `dtype` in a v1 model block),
`:onnx-int8` in int8 on ONNX Runtime (the `onnx` extra; the graph is exported at load). Texts are
corpus lines, or with `--docs` whole documents of a DocBin (e.g. GUM test, for coreference). A
pipeline with `elmo_coref` is also timed without it (its own step left out). Passes alternate between the pipelines, each on the same lines,
the biLM's token cache cleared before each pass; the best of `--repeats` counts, and each
pipeline's words/s is also given as a ratio of the first one's.

    python benchmarks/trained_pipeline_speed.py cnn=training/pipeline/cnn/seed0/model-best \
        elmo=training/pipeline/elmo/seed0/model-best elmo-int8=training/pipeline/elmo/seed0/model-best:int8 \
        --corpus ../shared/data/corpus/heldout.txt.gz --sentences 400 --threads 1
    python benchmarks/trained_pipeline_speed.py ort=PIPELINE:onnx-int8 --docs corpus/coref/test.spacy --threads 1
"""
import json
import time
from pathlib import Path
from typing import Dict, List, Tuple

import typer
from bilm_speed import DEFAULT_CORPUS, read_lines

app = typer.Typer(add_completion=False)
COREF = "elmo_coref"  # a component also timed without


def load(spec: str):
    """A pipeline from PATH or PATH:int8."""
    import spacy

    path, _, dtype = spec.partition(":")
    if not dtype:
        return spacy.load(path)
    if dtype == "onnx-int8":
        return spacy.load(path, config={"components.elmo.model.runtime": "onnxruntime", "components.elmo.model.compute_dtype": "int8"})
    block = spacy.util.load_config(Path(path) / "config.cfg")["components"]["elmo"]["model"]
    key = "compute_dtype" if "compute_dtype" in block else "dtype"  # v2, or the v1 block of older pipelines
    return spacy.load(path, config={f"components.elmo.model.{key}": dtype})


def clear_caches(nlp) -> None:
    """Forget the biLM's token cache, so that each pass embeds its words afresh."""
    if "elmo" in nlp.pipe_names:
        bilm = nlp.get_pipe("elmo").bilm
        if hasattr(bilm, "clear_cache"):  # ONNX Runtime's runner
            bilm.clear_cache()
        elif bilm is not None:  # the torch biLM
            bilm.token_cache.clear()


def timed_pass(nlp, texts: List[str], batch_size: int) -> Tuple[float, Dict[str, float]]:
    """Seconds of a pass, and seconds per step (tokenizer, then each component)."""
    clear_caches(nlp)
    steps: Dict[str, float] = {}
    start = time.perf_counter()
    docs = [nlp.make_doc(text) for text in texts]
    steps["tokenizer"] = time.perf_counter() - start
    for name, proc in nlp.pipeline:
        began = time.perf_counter()
        docs = list(proc.pipe(docs, batch_size=batch_size)) if hasattr(proc, "pipe") else [proc(doc) for doc in docs]
        steps[name] = time.perf_counter() - began
    return time.perf_counter() - start, steps


def doc_texts(path: Path) -> List[str]:
    """The texts of a DocBin's documents."""
    from spacy.tokens import DocBin
    from spacy.vocab import Vocab

    return [doc.text for doc in DocBin().from_disk(path).get_docs(Vocab())]


def folder_size(path: Path) -> int:
    """Bytes of every file under `path`."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


@app.command()
def main(
    pipelines: List[str] = typer.Argument(..., help="NAME=PATH or NAME=PATH:int8, the first is the reference of the ratios"),
    corpus: Path = typer.Option(DEFAULT_CORPUS, help="text, a sentence a line (.txt or .gz)"),
    sentences: int = typer.Option(400, help="how many corpus lines"),
    docs: Path = typer.Option(None, help="a DocBin whose whole documents are the texts, instead of the corpus"),
    repeats: int = typer.Option(3, help="timed passes per pipeline; the fastest counts"),
    batch_size: int = typer.Option(256, help="docs per nlp.pipe batch"),
    threads: int = typer.Option(1, help="torch threads"),
    output: Path = typer.Option(None, help="also write the figures as JSON"),
) -> None:
    """Time trained pipelines side by side."""
    import platform

    import torch

    from spacy_elmo.runtime import set_threads

    set_threads(threads)
    texts = read_lines(corpus, sentences) if docs is None else doc_texts(docs)
    named = dict(spec.split("=", 1) for spec in pipelines)
    loaded = {name: load(spec) for name, spec in named.items()}
    n_words = sum(len(doc) for doc in loaded[next(iter(loaded))].tokenizer.pipe(texts))
    for nlp in loaded.values():  # warm-up: the first pass loads lazily what each component needs
        timed_pass(nlp, texts[:20], batch_size)
    best: Dict[str, Tuple[float, Dict[str, float]]] = {}
    for _ in range(repeats):
        for name, nlp in loaded.items():
            seconds, steps = timed_pass(nlp, texts, batch_size)
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, steps)
    first = next(iter(best))
    print(f"{len(texts)} {'lines' if docs is None else 'documents'}, {n_words:,} words; {threads} thread(s); best of {repeats}; torch {torch.__version__}, {platform.processor() or platform.machine()}")
    results = {}
    for name, (seconds, steps) in best.items():
        path = Path(named[name].partition(":")[0])
        rate = n_words / seconds
        ratio = rate / (n_words / best[first][0])
        shares = ", ".join(f"{step} {100 * t / seconds:.0f}%" for step, t in steps.items())
        print(f"{name:>12}: {rate:8,.0f} words/s ({ratio:.2f}x {first}); {folder_size(path) / 1e6:.1f} MB on disk; time: {shares}")
        results[name] = {"words_per_second": rate, "ratio": ratio, "bytes": folder_size(path), "seconds_per_step": steps}
        if COREF in steps:
            without = n_words / (seconds - steps[COREF])
            print(f"{'':>12}  without {COREF}: {without:8,.0f} words/s; with it {rate / without:.2f}x of that")
            results[name]["words_per_second_without_coref"] = without
    if output:
        output.write_text(json.dumps({"words": n_words, "lines": len(texts), "threads": threads, "pipelines": results}, indent=2) + "\n")


if __name__ == "__main__":
    app()
