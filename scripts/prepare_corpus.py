"""Copy raw training text (one sentence per line, plain or .gz) into the project, optionally only
its first lines, as gzipped UTF-8 text.

    python scripts/prepare_corpus.py SOURCE.txt.gz corpus/lm/train.txt.gz [--max-lines 300]
"""

import gzip
import itertools
from pathlib import Path

import typer

from ud_text import open_text


def main(
    source: Path = typer.Argument(..., help="Text file, .txt or .gz, one sentence per line"),
    output: Path = typer.Argument(..., help="Gzipped copy to write"),
    max_lines: int = typer.Option(0, help="Keep only the first N lines (0: all)"),
) -> None:
    """Write the (first lines of the) corpus to `output`."""
    output.parent.mkdir(parents=True, exist_ok=True)
    n_lines = n_words = 0
    with open_text(source) as lines, gzip.open(output, "wt", encoding="utf8") as out:
        for line in itertools.islice(lines, max_lines or None):
            out.write(line)
            n_lines += 1
            n_words += len(line.split())
    print(f"{output}: {n_lines:,} lines, {n_words:,} words")


if __name__ == "__main__":
    typer.run(main)
