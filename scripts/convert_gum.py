"""Convert GUM (CoNLL-U with CorefUD `Entity=` annotations) to spaCy DocBins for coreference.

One Doc per document, with GUM's gold words and sentence boundaries. Every entity with two or
more mentions (a coreference chain; singletons are not predicted by spaCy's coref components,
nor by elmo_coref; `--singletons` keeps them too, for scoring with singletons in) becomes `doc.spans["coref_clusters_N"]` (the full mentions) and
`doc.spans["coref_head_clusters_N"]` (their head words, as spacy-experimental's coref component
is trained on), N = 1, 2, ... in order of first mention. The CorefUD annotations are read with
udapi. A mention's head is its highest word in GUM's gold dependency tree (the word whose parent
lies outside the mention; of several, the one nearest the root, then the first): GUM's
`global.Entity` has no head field, and udapi then gives every mention its first word.

    python scripts/convert_gum.py GUM_DIR corpus/coref [--limit-docs 3] [--singletons]

GUM_DIR holds gum-{train,dev,test}.conllu(.gz), and optionally gum-test2.conllu(.gz) (GENTLE, an
out-of-domain test set). Needs udapi (the `coref` extra, or `pip install udapi`).
"""
from collections import Counter
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import spacy
import typer
from spacy.tokens import Doc, DocBin, Span

SPLITS = ("train", "dev", "test")
OPTIONAL_SPLITS = ("test2",)  # converted when GUM_DIR has them
CLUSTER_PREFIX = "coref_clusters"
HEAD_PREFIX = "coref_head_clusters"


def read_documents(path: Path) -> Iterator[object]:
    """The udapi documents of a CoNLL-U file, one per `# newdoc`."""
    from udapi.block.read.conllu import Conllu
    from udapi.core.document import Document

    reader = Conllu(files=str(path), split_docs=True)
    while True:
        document = Document()
        reader.apply_on_document(document)
        if not document.bundles:
            return
        yield document
        if reader.finished:
            return


def highest_word(nodes: List[object], index: Dict[int, int], positions: List[int]) -> int:
    """The position of the mention's word nearest the root of the dependency tree among those
    whose parent lies outside the mention (the first of equals)."""
    inside = set(positions)
    tops = [p for p in positions if index.get(id(nodes[p].parent), -1) not in inside] or positions
    return min(tops, key=lambda p: (depth(nodes[p]), p))


def depth(node: object) -> int:
    """How many edges lie between a udapi node and its root."""
    steps = 0
    while not node.is_root():
        node, steps = node.parent, steps + 1
    return steps


def to_doc(document: object, vocab: spacy.vocab.Vocab, skipped: Counter, min_mentions: int = 2) -> Doc:
    """A spaCy Doc of one udapi document, with its coreference chains as span groups."""
    name = document.meta.get("docname", "?")
    nodes = [node for bundle in document.bundles for node in bundle.get_tree().descendants]
    index = {id(node): i for i, node in enumerate(nodes)}
    doc = Doc(
        vocab,
        words=[node.form for node in nodes],
        spaces=[not node.no_space_after for node in nodes],
        sent_starts=[node.ord == 1 for node in nodes],
    )
    try:
        entities = document.coref_entities
    except Exception as err:  # udapi raises plain exceptions for malformed Entity= brackets
        raise SystemExit(f"error: {name}: cannot read the coreference annotation ({err})") from None
    chains = [entity for entity in entities if len(entity.mentions) >= min_mentions]
    chains.sort(key=lambda entity: min(index[id(m.words[0])] for m in entity.mentions))
    for number, entity in enumerate(chains, 1):
        mentions: List[Span] = []
        heads: List[Span] = []
        for mention in entity.mentions:
            # Empty nodes (elided words of enhanced UD, e.g. 15.1) are not words of the text.
            positions = sorted(index[id(word)] for word in mention.words if id(word) in index)
            where = f"{name}, {mention.words[0].root.sent_id}"
            if not positions or positions != list(range(positions[0], positions[-1] + 1)):
                skipped[f"mentions without contiguous words (first: {where})"] += 1
                continue
            head = highest_word(nodes, index, positions)
            mentions.append(Span(doc, positions[0], positions[-1] + 1))
            heads.append(Span(doc, head, head + 1))
        doc.spans[f"{CLUSTER_PREFIX}_{number}"] = mentions
        doc.spans[f"{HEAD_PREFIX}_{number}"] = heads
    return doc


def convert(path: Path, output: Path, limit_docs: int, min_mentions: int = 2) -> Tuple[int, int, int, int, Counter]:
    """Write the DocBin; returns docs, tokens, chains, mentions and counts of the mentions
    skipped or adjusted, by reason."""
    vocab = spacy.blank("en").vocab
    docs = DocBin()
    n_docs = n_tokens = n_chains = n_mentions = 0
    skipped: Counter = Counter()
    for document in read_documents(path):
        doc = to_doc(document, vocab, skipped, min_mentions)
        docs.add(doc)
        n_docs += 1
        n_tokens += len(doc)
        chains = [key for key in doc.spans if key.startswith(CLUSTER_PREFIX)]
        n_chains += len(chains)
        n_mentions += sum(len(doc.spans[key]) for key in chains)
        if limit_docs and n_docs >= limit_docs:
            break
    output.parent.mkdir(parents=True, exist_ok=True)
    docs.to_disk(output)
    return n_docs, n_tokens, n_chains, n_mentions, skipped


def main(
    gum_dir: Path = typer.Argument(..., help="Folder of gum-{train,dev,test}.conllu(.gz)"),
    output_dir: Path = typer.Argument(..., help="Folder for train.spacy, dev.spacy, test.spacy"),
    limit_docs: int = typer.Option(0, help="Only the first N documents of each split (0: all)"),
    singletons: bool = typer.Option(False, help="Keep entities of one mention too (scoring with singletons in)"),
) -> None:
    """Write train/dev/test (and test2) DocBins of GUM with coreference chains."""
    for split in SPLITS + OPTIONAL_SPLITS:
        candidates = [gum_dir / f"gum-{split}.conllu.gz", gum_dir / f"gum-{split}.conllu"]
        path = next((c for c in candidates if c.is_file()), None)
        if path is None and split in OPTIONAL_SPLITS:
            continue
        if path is None:
            raise SystemExit(f"error: {gum_dir} has no gum-{split}.conllu(.gz); set --vars.gum_dir to GUM's folder")
        docs, tokens, chains, mentions, skipped = convert(path, output_dir / f"{split}.spacy", limit_docs, 1 if singletons else 2)
        print(f"{split}: {docs} docs, {tokens:,} tokens, {chains:,} chains, {mentions:,} mentions -> {output_dir / split}.spacy")
        for reason, count in skipped.items():
            print(f"  {count} {reason}")


if __name__ == "__main__":
    typer.run(main)
