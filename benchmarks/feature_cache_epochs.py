"""Epoch times of training NER on ELMo features, with and without the `elmo` feature cache.

Random weights of a published architecture; corpus lines (default: the sample in `data/smoke`) with synthetic entities (runs of
capitalised words) as training data; `configs/ner.cfg`'s components, trained with
`nlp.update` the way `spacy train` does. With the cache, epochs after the first skip the biLM.

    python benchmarks/feature_cache_epochs.py --size small --sentences 200 --epochs 3
"""
import random
import tempfile
import time
from pathlib import Path
from typing import Dict, List

import typer
from bilm_speed import DEFAULT_CORPUS, SIZES, read_lines, write_random_weights

ROOT = Path(__file__).resolve().parents[1]
app = typer.Typer(add_completion=False)


def synthetic_examples(nlp, texts: List[str]) -> list:  # type: ignore[no-untyped-def]
    """Examples whose entities are the runs of capitalised words after the first token."""
    from spacy.training import Example

    examples = []
    for text in texts:
        doc = nlp.make_doc(text)
        ents, start = [], None
        for token in list(doc) + [None]:
            capital = token is not None and token.i > 0 and token.text[:1].isupper()
            if capital and start is None:
                start = token.i
            elif not capital and start is not None:
                ents.append(doc[start : token.i if token is not None else len(doc)])
                start = None
        spans = [(span.start_char, span.end_char, "CAP") for span in ents]
        examples.append(Example.from_dict(doc, {"entities": spans}))
    return examples


def epoch_times(folder: Path, texts: List[str], epochs: int, batch_size: int, cache_mb: int) -> List[float]:
    import spacy
    from spacy.util import fix_random_seed, load_config, minibatch

    config = load_config(ROOT / "configs" / "ner.cfg", overrides={
        "paths.elmo_model": str(folder / "weights.hdf5"), "paths.elmo_options": str(folder / "options.json"),
        "components.elmo.feature_cache_mb": cache_mb,
    })  # fmt: skip
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    fix_random_seed(0)
    examples = synthetic_examples(nlp, texts)
    optimizer = nlp.initialize(lambda: examples)
    times = []
    for _ in range(epochs):
        random.shuffle(examples)
        start = time.perf_counter()
        losses: Dict[str, float] = {}
        for batch in minibatch(examples, batch_size):
            nlp.update(batch, sgd=optimizer, losses=losses, drop=0.1)
        times.append(time.perf_counter() - start)
    return times


@app.command()
def main(
    size: str = typer.Option("small", help="small, medium or original (random weights)"),
    sentences: int = typer.Option(200, help="training lines"),
    epochs: int = typer.Option(3),
    batch_size: int = typer.Option(32, help="examples per update"),
    corpus: Path = typer.Option(DEFAULT_CORPUS, help="text, a sentence a line (.txt or .gz); default: the 200-line sample in data/smoke"),
    threads: int = typer.Option(1, help="torch threads (0: torch's default)"),
) -> None:
    import torch

    if size not in SIZES:
        raise typer.BadParameter(f"size must be one of {sorted(SIZES)}")
    if threads:
        torch.set_num_threads(threads)
    texts = read_lines(corpus, sentences)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_random_weights(size, folder)
        results = {label: epoch_times(folder, texts, epochs, batch_size, mb) for label, mb in (("no cache", 0), ("cache", 2048))}
    n_words = sum(len(t.split()) for t in texts)
    print(f"size={size} lines={len(texts)} (~{n_words} words) epochs={epochs} batch_size={batch_size} threads={torch.get_num_threads()}")
    for label, times in results.items():
        print(f"{label:>9}: " + "  ".join(f"epoch {i + 1} {t:.2f} s" for i, t in enumerate(times)) + f"  total {sum(times):.2f} s")


if __name__ == "__main__":
    app()
