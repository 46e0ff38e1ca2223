"""Convert UD English-EWT CoNLL-U files (plain or .gz) to spaCy DocBin files for POS tagging.

One sentence per Doc. The UPOS tag goes to `token.tag_` (what spaCy's tagger learns) and
`token.pos_`; spaces come from `SpaceAfter=No`. Multiword-token ranges and empty nodes are
skipped: the words are the syntactic words, as in UNER.

    python scripts/convert_ud.py UD_DIR corpus/pos [--limit 300]

UD_DIR holds en_ewt-ud-{train,dev,test}.conllu, plain or gzipped (.conllu.gz).
"""

from pathlib import Path
from typing import Iterator, List, Tuple

import spacy
import typer
from spacy.tokens import Doc, DocBin

from ud_text import open_text

Sentence = Tuple[List[str], List[str], List[bool]]  # words, UPOS tags, spaces


def read_conllu(path: Path) -> Iterator[Sentence]:
    """Sentences of a CoNLL-U file: (words, UPOS tags, spaces after each word)."""
    words: List[str] = []
    tags: List[str] = []
    spaces: List[bool] = []
    with open_text(path) as lines:
        for number, line in enumerate(lines, 1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if words:
                    yield words, tags, spaces
                words, tags, spaces = [], [], []
                continue
            columns = line.split("\t")
            if len(columns) != 10:
                raise ValueError(f"{path}:{number}: expected 10 tab-separated CoNLL-U columns, got {len(columns)}")
            if "-" in columns[0] or "." in columns[0]:
                continue
            words.append(columns[1])
            tags.append(columns[3])
            spaces.append("SpaceAfter=No" not in columns[9].split("|"))
    if words:
        yield words, tags, spaces


def to_docbin(sentences: List[Sentence], path: Path) -> None:
    vocab = spacy.blank("en").vocab
    docs = DocBin(attrs=["TAG", "POS"])
    for words, tags, spaces in sentences:
        docs.add(Doc(vocab, words=words, spaces=spaces, tags=tags, pos=tags))
    path.parent.mkdir(parents=True, exist_ok=True)
    docs.to_disk(path)


def main(
    ud_dir: Path = typer.Argument(..., help="Folder of UD English-EWT's en_ewt-ud-{train,dev,test}.conllu(.gz)"),
    output_dir: Path = typer.Argument(..., help="Folder for train.spacy, dev.spacy, test.spacy"),
    limit: int = typer.Option(0, help="Use only the first N sentences of each file (0: all)"),
) -> None:
    """Write train/dev/test DocBins of UD English-EWT with UPOS tags."""
    for name in ("train", "dev", "test"):
        plain = ud_dir / f"en_ewt-ud-{name}.conllu"
        sentences = list(read_conllu(plain if plain.is_file() else plain.with_suffix(".conllu.gz")))
        if limit:
            sentences = sentences[:limit]
        to_docbin(sentences, output_dir / f"{name}.spacy")
        n_words = sum(len(s[0]) for s in sentences)
        print(f"{name}: {len(sentences):,} sentences, {n_words:,} words -> {output_dir / name}.spacy")


if __name__ == "__main__":
    typer.run(main)
