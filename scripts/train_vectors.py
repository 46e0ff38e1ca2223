"""Train floret vectors (fastText subwords in a compact hash table, spaCy's own vector tool) on
the text the biLM was pretrained on, tokenized exactly as the biLM's pretraining tokenized it
(spacy_elmo.training.corpus: spaCy's English tokenizer, whitespace tokens dropped, lines over
20,000 characters skipped), one sentence per line. Writes OUTPUT.floret (the table for
`spacy init vectors --mode floret`) and OUTPUT.json (settings, counts, training time).

    python scripts/train_vectors.py corpus/lm/train.txt.gz corpus/vectors/floret

The defaults are those of spaCy's floret projects for `md` pipelines (cbow, 300 dimensions,
character 4- to 5-grams, 2 hashes per entry, 5 epochs, min count 10, 10 negatives), with 40,000
rows instead of 50,000 so that the table stays under 50 MB (40,000 x 300 x 4 bytes = 48 MB).
"""

import json
import time
from pathlib import Path

import typer

from spacy_elmo.training.corpus import TextCorpus, make_tokenizer


def tokenize(source: Path, output: Path) -> int:
    """Write the tokens of each usable line of `source` to `output`, space-separated; the count."""
    n_tokens = 0
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf8") as file:
        for tokens in TextCorpus([source], make_tokenizer("en")).texts():
            file.write(" ".join(tokens) + "\n")
            n_tokens += len(tokens)
    return n_tokens


def cpu_model() -> str:
    """The CPU's model name as /proc/cpuinfo gives it (e.g. "AMD EPYC")."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def main(
    text: Path = typer.Argument(..., help="Raw text, one sentence per line (.txt or .gz)"),
    output: Path = typer.Argument(..., help="Output stem: writes OUTPUT.floret, OUTPUT.json and OUTPUT.tok.txt"),
    dim: int = typer.Option(300, help="Vector width"),
    minn: int = typer.Option(4, help="Shortest character n-gram"),
    maxn: int = typer.Option(5, help="Longest character n-gram"),
    bucket: int = typer.Option(40_000, help="Rows of the hash table"),
    hash_count: int = typer.Option(2, help="Rows each word or n-gram is hashed to"),
    epoch: int = typer.Option(5, help="Passes over the text"),
    min_count: int = typer.Option(10, help="Words seen fewer times get no word entry (their n-grams still count)"),
    neg: int = typer.Option(10, help="Negative samples"),
    threads: int = typer.Option(1, help="floret threads (1: the same vectors on every run; more vary)"),
) -> None:
    """Tokenize `text`, train floret vectors on it and export the floret table."""
    import floret

    tokens_path = output.with_suffix(".tok.txt")
    start = time.perf_counter()
    n_tokens = tokenize(text, tokens_path)
    tokenize_s = time.perf_counter() - start
    print(f"{tokens_path}: {n_tokens:,} tokens ({tokenize_s:.0f} s)", flush=True)
    settings = {"model": "cbow", "mode": "floret", "dim": dim, "minn": minn, "maxn": maxn, "bucket": bucket,
                "hashCount": hash_count, "epoch": epoch, "minCount": min_count, "neg": neg, "thread": threads}  # fmt: skip
    start = time.perf_counter()
    model = floret.train_unsupervised(str(tokens_path), verbose=1, **settings)
    train_s = time.perf_counter() - start
    model.save_floret_vectors(str(output.with_suffix(".floret")))
    record = {
        "text": str(text),
        "tokens": n_tokens,
        "words_with_entries": len(model.words),
        "settings": settings,
        "tokenize_seconds": round(tokenize_s, 1),
        "train_seconds": round(train_s, 1),
        "cpu": cpu_model(),
    }
    output.with_suffix(".json").write_text(json.dumps(record, indent=2))
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    typer.run(main)
