"""CoNLL-U treebanks (Universal Dependencies): the syntactic words of each sentence with their
annotation. Multiword-token ranges and empty nodes are skipped, so the words are the ones UD
scores (the "gold tokenization" of the CoNLL 2018 shared task)."""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, List, Optional

from ..errors import SpacyElmoError
from .text_files import read_lines


@dataclass
class Sentence:
    """One CoNLL-U sentence. `heads` are 0-based word indices, the root's head is itself."""

    sent_id: Optional[str]
    newdoc: bool
    words: List[str] = field(default_factory=list)
    spaces: List[bool] = field(default_factory=list)
    lemmas: List[str] = field(default_factory=list)
    upos: List[str] = field(default_factory=list)
    xpos: List[str] = field(default_factory=list)
    feats: List[str] = field(default_factory=list)
    heads: List[int] = field(default_factory=list)
    deprels: List[str] = field(default_factory=list)


def read_conllu(path: Path) -> Iterator[Sentence]:
    """The sentences of a CoNLL-U file (plain or .gz); a malformed line is a `SpacyElmoError`
    naming the file and line."""
    sentence = Sentence(None, False)
    raw_heads: List[str] = []
    start = 1
    token_end, token_space = 0, True  # the last word of the current multiword token, its SpaceAfter
    for number, line in read_lines(path):
        if line.startswith("#"):
            key, _, value = line[1:].partition("=")
            if key.strip() == "sent_id":
                sentence.sent_id = value.strip()
            elif key.strip() == "newdoc id" or key.strip() == "newdoc":
                sentence.newdoc = True
            continue
        if not line.strip():
            if sentence.words:
                yield _finish(sentence, raw_heads, path, start)
            sentence, raw_heads, start, token_end = Sentence(None, False), [], number + 1, 0
            continue
        columns = line.split("\t")
        if len(columns) != 10:
            raise SpacyElmoError(f"{path}:{number}: expected 10 tab-separated CoNLL-U columns, got {len(columns)}")
        index, form, lemma, upos, xpos, feats, head, deprel, _, misc = columns
        if "-" in index:  # a multiword token: its words are joined, its MISC has the space after
            token_end, token_space = int(index.split("-")[1]), "SpaceAfter=No" not in misc.split("|")
            continue
        if "." in index:
            continue
        if not index.isdigit() or int(index) != len(sentence.words) + 1:
            raise SpacyElmoError(f"{path}:{number}: word index {index!r}, expected {len(sentence.words) + 1}")
        sentence.words.append(form)
        if len(sentence.words) <= token_end:
            sentence.spaces.append(token_space if len(sentence.words) == token_end else False)
        else:
            sentence.spaces.append("SpaceAfter=No" not in misc.split("|"))
        sentence.lemmas.append(lemma)
        sentence.upos.append(upos)
        sentence.xpos.append(xpos)
        sentence.feats.append("" if feats == "_" else feats)
        sentence.deprels.append(deprel)
        raw_heads.append(head)
    if sentence.words:
        yield _finish(sentence, raw_heads, path, start)


def _finish(sentence: Sentence, raw_heads: List[str], path: Path, line: int) -> Sentence:
    for i, head in enumerate(raw_heads):
        if not head.isdigit() or int(head) > len(raw_heads):
            raise SpacyElmoError(
                f"{path}: sentence at line {line} ({sentence.sent_id}): word {i + 1} has head {head!r}, "
                f"not 0..{len(raw_heads)}"
            )
        sentence.heads.append(i if head == "0" else int(head) - 1)
    return sentence
