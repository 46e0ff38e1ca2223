"""Words/second of `nlp.pipe` with the `elmo` component, and its overhead over calling the biLM directly.

The biLM is a bundled or saved model (`--model`), or random weights of a published
architecture written in the original hdf5 layout (`--size`, as `bilm_speed.py` does); the same
corpus lines (default: the 200-line sample in `data/smoke`, so a fresh clone runs it) are embedded three ways, each pass cold (the biLM's token cache cleared),
alternating, best of `--repeats`:

- direct: `bilm.embed_sentences` on the token lists (the biLM alone);
- component: `nlp.pipe` on pre-tokenized Docs (the biLM plus the component's glue);
- pipeline: `nlp.pipe` on the raw texts (adds spaCy's tokenizer).

    python benchmarks/pipeline_speed.py --model en_base --threads 1
    python benchmarks/pipeline_speed.py --model en_base --threads 2 --corpus ../shared/data/corpus/heldout.txt.gz
    python benchmarks/pipeline_speed.py --size small
    python benchmarks/pipeline_speed.py --size original --sentences 128
    python benchmarks/pipeline_speed.py --model ~/elmo-runs/en-v2/snapshot --against en_base --threads 1

`--against` times a second model's pipeline in the same run, alternating pass by pass with the
first, and prints the ratio of their words/s (the inference budget of a new bundled model).
"""
import tempfile
import time
from pathlib import Path
from typing import Callable

import typer
from bilm_speed import DEFAULT_CORPUS, SIZES, read_lines, write_random_weights

app = typer.Typer(add_completion=False)


def timed(run: Callable[[], object], before: Callable[[], None]) -> float:
    """Seconds one call of `run` takes, after `before`."""
    before()
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


@app.command()
def main(
    model: str = typer.Option("", help="a bundled model's name or a model folder (instead of --size)"),
    size: str = typer.Option("small", help="small, medium or original (random weights)"),
    sentences: int = typer.Option(256, help="how many corpus lines to embed"),
    batch_size: int = typer.Option(64, help="sequences per biLM forward pass"),
    pipe_batch_size: int = typer.Option(1000, help="docs per nlp.pipe batch (spaCy's default)"),
    max_tokens: int = typer.Option(4096, help="padded token slots per forward pass"),
    dtype: str = typer.Option("float32", help="float32 or bfloat16"),
    device: str = typer.Option("cpu", help="cpu or cuda"),
    corpus: Path = typer.Option(DEFAULT_CORPUS, help="text, a sentence a line (.txt or .gz); default: the 200-line sample in data/smoke"),
    repeats: int = typer.Option(5, help="timed passes per way; the fastest counts"),
    threads: int = typer.Option(1, help="torch threads (1 is steadiest on a shared machine; 0: torch's default)"),
    against: str = typer.Option("", help="a second bundled model or model folder, timed side by side (pipeline way)"),
) -> None:
    import spacy
    import torch
    from spacy.tokens import Doc

    if threads:
        torch.set_num_threads(threads)
    if size not in SIZES:
        raise typer.BadParameter(f"size must be one of {sorted(SIZES)}")
    texts = read_lines(corpus, sentences)
    nlp = spacy.blank("en")
    block = {"batch_size": batch_size, "max_tokens": max_tokens, "compute_dtype": dtype, "device": device}
    with tempfile.TemporaryDirectory() as tmp:
        if model:
            block["bilm"] = model
        else:
            write_random_weights(size, Path(tmp))
            block.update(bilm=str(Path(tmp) / "weights.hdf5"), options=str(Path(tmp) / "options.json"))
        elmo = nlp.add_pipe("elmo", config={"model": block})
        nlp.initialize()
    if against:
        other = spacy.blank("en")
        other_elmo = other.add_pipe("elmo", config={"model": {**block, "bilm": against, "options": None}})
        other.initialize()
    words = [[t.text for t in doc if not t.is_space] for doc in nlp.tokenizer.pipe(texts)]
    docs = [Doc(nlp.vocab, words=w) for w in words]
    n_words = sum(map(len, words))
    bilm = elmo.bilm

    def cold() -> None:
        bilm.token_cache.clear()
        if against:
            other_elmo.bilm.token_cache.clear()

    ways = {
        "direct": lambda: bilm.embed_sentences(words, batch_size=batch_size, max_tokens=max_tokens),
        "component": lambda: list(nlp.pipe(docs, batch_size=pipe_batch_size)),
        "pipeline": lambda: list(nlp.pipe(texts, batch_size=pipe_batch_size)),
    }
    if against:
        ways["against"] = lambda: list(other.pipe(texts, batch_size=pipe_batch_size))
    ways["direct"]()  # warm up torch
    seconds = {name: float("inf") for name in ways}
    for _ in range(repeats):
        for name, run in ways.items():
            seconds[name] = min(seconds[name], timed(run, cold))
    print(f"{'model=' + model if model else 'size=' + size} dtype={dtype} device={device} lines={len(texts)} words={n_words} batch_size={batch_size} pipe_batch_size={pipe_batch_size} "
          f"threads={torch.get_num_threads()} best of {repeats}")
    for name, s in seconds.items():
        print(f"{name:>10}: {n_words / s:9.1f} words/s ({s:.3f} s)" + (f", {against}" if name == "against" else ""))
    print(f"component overhead over the biLM: {100 * (seconds['component'] / seconds['direct'] - 1):+.1f}%")
    print(f"pipeline (with tokenizer) overhead: {100 * (seconds['pipeline'] / seconds['direct'] - 1):+.1f}%")
    if against:
        print(f"this model's pipeline takes {seconds['pipeline'] / seconds['against']:.2f}x the time of {against}'s")


if __name__ == "__main__":
    app()
