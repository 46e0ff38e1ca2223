"""Convert UNER English-EWT (IOB2 columns) to spaCy DocBin files, one sentence per Doc.

The official splits are kept: train, dev and test from en_ewt-ud-{train,dev,test}.iob2. With
--low-resource N, `train-N.spacy` also holds the first N train sentences (file order, one genre),
and `train-N-random.spacy` N sentences drawn at random (--seed) from all of train (all genres),
for the low-resource comparison. Spaces between tokens come from the `# text` line where the tokens
can be found in it.

    python scripts/convert_uner.py UNER_DIR corpus/ner [--low-resource 1000] [--seed 0] [--limit 300]
"""

from pathlib import Path
from typing import Iterator, List, Tuple

import random
from collections import Counter

import spacy
import typer
from spacy.tokens import Doc, DocBin
from spacy.training import biluo_tags_to_spans, iob_to_biluo

from spacy_elmo.corpora import read_iob2

Sentence = Tuple[List[str], List[str], List[bool]]  # words, IOB2 tags, spaces


def read_sentences(path: Path) -> Iterator[Sentence]:
    """Sentences of a UNER file: (words, IOB2 tags, spaces after each word)."""
    for sentence in read_iob2(path):
        yield sentence.words, sentence.tags, sentence.spaces()


def to_docbin(sentences: List[Sentence], path: Path) -> None:
    vocab = spacy.blank("en").vocab
    docs = DocBin()
    for words, tags, spaces in sentences:
        doc = Doc(vocab, words=words, spaces=spaces)
        doc.ents = biluo_tags_to_spans(doc, iob_to_biluo(tags))
        docs.add(doc)
    path.parent.mkdir(parents=True, exist_ok=True)
    docs.to_disk(path)


def count_entities(sentences: List[Sentence]) -> Counter:
    """Entities per label."""
    return Counter(tag[2:] for s in sentences for tag in s[1] if tag.startswith("B-"))


def random_sample(sentences: List[Sentence], n: int, seed: int) -> List[Sentence]:
    """`n` sentences drawn without replacement (seeded), kept in file order."""
    chosen = sorted(random.Random(seed).sample(range(len(sentences)), n))
    return [sentences[i] for i in chosen]


def main(
    uner_dir: Path = typer.Argument(..., help="Folder of UNER English-EWT's en_ewt-ud-{train,dev,test}.iob2"),
    output_dir: Path = typer.Argument(..., help="Folder for train.spacy, dev.spacy, test.spacy"),
    low_resource: int = typer.Option(0, help="Also write train-N.spacy: the first N train sentences (0: no)"),
    limit: int = typer.Option(0, help="Use only the first N sentences of each file (0: all)"),
    seed: int = typer.Option(0, help="Seed of the random low-resource sample"),
) -> None:
    """Write train/dev/test DocBins of UNER English-EWT."""
    parts = {}
    for name in ("train", "dev", "test"):
        path = uner_dir / f"en_ewt-ud-{name}.iob2"
        if not path.exists():
            raise SystemExit(f"{path} is missing: UNER_DIR must hold en_ewt-ud-train.iob2, -dev.iob2 and -test.iob2")
        parts[name] = list(read_sentences(path))[: limit or None]
    if low_resource:
        if low_resource > len(parts["train"]):
            raise SystemExit(f"--low-resource {low_resource}: train has only {len(parts['train']):,} sentences")
        parts[f"train-{low_resource}"] = parts["train"][:low_resource]
        parts[f"train-{low_resource}-random"] = random_sample(parts["train"], low_resource, seed)
    for name, part in parts.items():
        to_docbin(part, output_dir / f"{name}.spacy")
        counts = count_entities(part)
        by_label = ", ".join(f"{label} {n:,}" for label, n in sorted(counts.items()))
        print(f"{name}: {len(part):,} sentences, {sum(counts.values()):,} entities ({by_label}) -> {output_dir / name}.spacy")


if __name__ == "__main__":
    typer.run(main)
