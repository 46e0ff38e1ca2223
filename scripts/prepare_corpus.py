"""Copy raw training text (one sentence per line, plain or .gz) into the project as gzipped
UTF-8 text: one file, or several mixed line by line in a seeded random order, so that every
stretch of training sees all of them in proportion. Optionally only the first lines.

    python scripts/prepare_corpus.py corpus/lm/train.txt.gz TRAIN.txt.gz [EXTRA.txt.gz ...] [--max-lines 300]
"""

import gzip
import itertools
import random
from pathlib import Path
from typing import List

import typer

from ud_text import open_text


def main(
    output: Path = typer.Argument(..., help="Gzipped text to write"),
    sources: List[Path] = typer.Argument(..., help="Text files, .txt or .gz, one sentence per line"),
    max_lines: int = typer.Option(0, help="Keep only the first N lines of the result (0: all)"),
    seed: int = typer.Option(0, help="Seed of the line order when several sources are mixed"),
) -> None:
    """Write the (first lines of the) mixed sources to `output`."""
    lines: List[str] = []
    for source in sources:
        with open_text(source) as text:
            lines.extend(line if line.endswith("\n") else line + "\n" for line in text)
    if len(sources) > 1:
        random.Random(seed).shuffle(lines)
    output.parent.mkdir(parents=True, exist_ok=True)
    n_lines = n_words = 0
    # mtime=0: the same inputs give the same bytes
    with gzip.GzipFile(output, "wb", mtime=0) as raw:
        for line in itertools.islice(lines, max_lines or None):
            raw.write(line.encode("utf8"))
            n_lines += 1
            n_words += len(line.split())
    print(f"{output}: {n_lines:,} lines, {n_words:,} words")


if __name__ == "__main__":
    typer.run(main)
