"""Convert UNER English-EWT (IOB2 columns) to spaCy DocBin files, one sentence per Doc.

UNER has no English-EWT train file here, so the dev file is split deterministically (a seeded
shuffle of its sentences) into train and dev, 85/15; the test file stays the test set.
Spaces between tokens come from the `# text` line where the tokens can be found in it.

    python scripts/convert_uner.py UNER_DIR corpus/ner [--dev-share 0.15] [--limit 300]

UNER_DIR holds en_ewt-ud-dev.iob2 and en_ewt-ud-test.iob2.
"""

import random
from pathlib import Path
from typing import Iterator, List, Tuple

import spacy
import typer
from spacy.tokens import Doc, DocBin
from spacy.training import biluo_tags_to_spans, iob_to_biluo

from ud_text import open_text, spaces_from_text

Sentence = Tuple[List[str], List[str], List[bool]]  # words, IOB2 tags, spaces


def read_iob2(path: Path) -> Iterator[Sentence]:
    """Sentences of a UNER file: (words, IOB2 tags, spaces after each word)."""
    text, words, tags = "", [], []
    with open_text(path) as lines:
        for number, line in enumerate(lines, 1):
            line = line.rstrip("\n")
            if line.startswith("# text"):
                text = line.split("=", 1)[1].strip()
            elif line.startswith("#"):
                continue
            elif not line.strip():
                if words:
                    yield words, tags, spaces_from_text(words, text)
                text, words, tags = "", [], []
            else:
                columns = line.split("\t")
                if len(columns) < 3 or not (columns[2] == "O" or columns[2][:2] in ("B-", "I-")):
                    raise ValueError(f"{path}:{number}: expected 'index<TAB>token<TAB>IOB2 tag', got {line!r}")
                words.append(columns[1])
                tags.append(columns[2])
    if words:
        yield words, tags, spaces_from_text(words, text)


def split(sentences: List[Sentence], dev_share: float, seed: int) -> Tuple[List[Sentence], List[Sentence]]:
    """Shuffle the sentences with `seed`; the first `dev_share` of them are dev, the rest train
    (each in file order)."""
    order = list(range(len(sentences)))
    random.Random(seed).shuffle(order)
    dev_ids = set(order[: round(dev_share * len(sentences))])
    train = [s for i, s in enumerate(sentences) if i not in dev_ids]
    return train, [s for i, s in enumerate(sentences) if i in dev_ids]


def to_docbin(sentences: List[Sentence], path: Path) -> None:
    vocab = spacy.blank("en").vocab
    docs = DocBin()
    for words, tags, spaces in sentences:
        doc = Doc(vocab, words=words, spaces=spaces)
        doc.ents = biluo_tags_to_spans(doc, iob_to_biluo(tags))
        docs.add(doc)
    path.parent.mkdir(parents=True, exist_ok=True)
    docs.to_disk(path)


def count_entities(sentences: List[Sentence]) -> int:
    return sum(tag.startswith("B-") for s in sentences for tag in s[1])


def main(
    uner_dir: Path = typer.Argument(..., help="Folder of UNER English-EWT's en_ewt-ud-dev.iob2 and -test.iob2"),
    output_dir: Path = typer.Argument(..., help="Folder for train.spacy, dev.spacy, test.spacy"),
    dev_share: float = typer.Option(0.15, help="Share of the sentences kept for dev"),
    seed: int = typer.Option(0, help="Seed of the sentence shuffle"),
    limit: int = typer.Option(0, help="Use only the first N sentences of each file (0: all)"),
) -> None:
    """Write train/dev/test DocBins of UNER English-EWT."""
    labelled = list(read_iob2(uner_dir / "en_ewt-ud-dev.iob2"))
    test = list(read_iob2(uner_dir / "en_ewt-ud-test.iob2"))
    if limit:
        labelled, test = labelled[:limit], test[:limit]
    train, dev = split(labelled, dev_share, seed)
    for name, part in (("train", train), ("dev", dev), ("test", test)):
        to_docbin(part, output_dir / f"{name}.spacy")
        print(f"{name}: {len(part):,} sentences, {count_entities(part):,} entities -> {output_dir / name}.spacy")


if __name__ == "__main__":
    typer.run(main)
