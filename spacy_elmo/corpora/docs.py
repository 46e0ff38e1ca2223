"""Corpus sentences as spaCy docs: UD annotation, with UNER entities laid over it by sentence id."""
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..errors import SpacyElmoError
from .conllu import Sentence, read_conllu
from .iob2 import NerSentence, read_iob2

CONLLU_SUFFIXES = (".conllu", ".conllu.gz")
IOB2_SUFFIXES = (".iob2", ".iob2.gz", ".iob", ".iob.gz")


def corpus_docs(
    vocab: Vocab, source: Path, *, ner: Optional[Path] = None, n_sents: int = 1, limit: int = 0
) -> Tuple[List[Doc], Dict[str, int]]:
    """Docs of a CoNLL-U or IOB2 file, and counts of what they hold.

    source (Path): a `.conllu` (UD: words, lemmas, UPOS, XPOS, features, dependencies) or `.iob2`
        file (UNER: words and entities), plain or gzipped.
    ner (Optional[Path]): an IOB2 file whose entities go onto the CoNLL-U sentences of the same
        `sent_id`; a sentence it lacks, or whose words differ, gets no entity annotation (missing,
        not "no entity"), and the counts say how many.
    n_sents (int): sentences per doc, within a CoNLL-U document (`# newdoc`); 1 keeps the gold
        sentences as docs.
    limit (int): only the first N sentences (0: all).
    """
    if n_sents < 1:
        raise SpacyElmoError(f"n_sents must be at least 1, got {n_sents}")
    name = source.name.lower()
    if name.endswith(IOB2_SUFFIXES):
        if ner is not None:
            raise SpacyElmoError(f"{source} is an IOB2 file already; the entities of --ner go onto a CoNLL-U file")
        sentences = _limited(read_iob2(source), limit)
        docs = [_ner_doc(vocab, sentence) for sentence in sentences]
        return docs, {"sentences": len(docs), "words": sum(len(d) for d in docs), "entities": sum(len(d.ents) for d in docs)}
    if not name.endswith(CONLLU_SUFFIXES):
        raise SpacyElmoError(f"{source}: expected a .conllu or .iob2 file (plain or .gz)")
    sentences = _limited(read_conllu(source), limit)
    entities = _entities_by_sentence(ner, sentences) if ner is not None else None
    docs = [_ud_doc(vocab, group, entities) for group in _groups(sentences, n_sents)]
    counts = {"sentences": len(sentences), "words": sum(len(s.words) for s in sentences), "docs": len(docs)}
    if entities is not None:
        counts["entities"] = sum(len(d.ents) for d in docs)
        counts["sentences without entity annotation"] = sum(1 for s in sentences if s.sent_id not in entities)
    return docs, counts


def _limited(sentences: Iterator, limit: int) -> list:
    result = []
    for sentence in sentences:
        if limit and len(result) == limit:
            break
        result.append(sentence)
    return result


def _groups(sentences: Sequence[Sentence], n_sents: int) -> Iterator[List[Sentence]]:
    group: List[Sentence] = []
    for sentence in sentences:
        if group and (sentence.newdoc or len(group) == n_sents):
            yield group
            group = []
        group.append(sentence)
    if group:
        yield group


def _entities_by_sentence(path: Path, sentences: Sequence[Sentence]) -> Dict[str, List[str]]:
    """IOB2 tags by sentence id, for the sentences whose words match the treebank's."""
    words = {s.sent_id: s.words for s in sentences if s.sent_id is not None}
    if not words:
        raise SpacyElmoError("the CoNLL-U file has no `# sent_id` lines, so entities cannot be matched to its sentences")
    tags = {}
    for sentence in read_iob2(path):
        if sentence.sent_id is None:
            raise SpacyElmoError(f"{path}: a sentence without `# sent_id` ({' '.join(sentence.words[:8])} ...)")
        if words.get(sentence.sent_id) == sentence.words:
            tags[sentence.sent_id] = sentence.tags
    if not tags:
        raise SpacyElmoError(f"{path}: no sentence matches the CoNLL-U file by sent_id and words; is it the same treebank and split?")
    return tags


def _ud_doc(vocab: Vocab, group: List[Sentence], entities: Optional[Dict[str, List[str]]]) -> Doc:
    words, spaces, lemmas, upos, xpos, feats, heads, deprels, starts = [], [], [], [], [], [], [], [], []
    ents: List[Optional[str]] = []
    for sentence in group:
        offset = len(words)
        words += sentence.words
        spaces += sentence.spaces
        lemmas += sentence.lemmas
        upos += sentence.upos
        xpos += sentence.xpos
        feats += sentence.feats
        heads += [offset + head for head in sentence.heads]
        deprels += ["ROOT" if rel == "root" else rel for rel in sentence.deprels]
        starts += [True] + [False] * (len(sentence.words) - 1)
        found = entities.get(sentence.sent_id) if entities is not None and sentence.sent_id else None
        ents += found if found is not None else [None] * len(sentence.words)
    spaces[-1] = False
    return Doc(
        vocab,
        words=words,
        spaces=spaces,
        lemmas=lemmas,
        pos=upos,
        tags=xpos,
        morphs=feats,
        heads=heads,
        deps=deprels,
        sent_starts=starts,
        ents=ents if entities is not None else None,
    )


def _ner_doc(vocab: Vocab, sentence: NerSentence) -> Doc:
    return Doc(vocab, words=sentence.words, spaces=sentence.spaces(), ents=sentence.tags)
