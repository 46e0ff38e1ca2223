"""UNER's IOB2 files: `# sent_id` and `# text` comments, then `index<TAB>token<TAB>tag` rows."""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, List, Optional

from ..errors import SpacyElmoError
from .text_files import read_lines


@dataclass
class NerSentence:
    """One sentence of an IOB2 file: its words, IOB2 tags and the `# text` line."""

    sent_id: Optional[str]
    text: str = ""
    words: List[str] = field(default_factory=list)
    tags: List[str] = field(default_factory=list)

    def spaces(self) -> List[bool]:
        """Whether each word is followed by whitespace in `# text`; all True where the words are
        not found in order in it (some UNER text lines predate UD's tokenization fixes)."""
        spaces, position = [], 0
        for word in self.words:
            found = self.text.find(word, position)
            if found < 0 or self.text[position:found].strip():
                return [True] * len(self.words)
            position = found + len(word)
            spaces.append(self.text[position : position + 1].isspace())
        return spaces


def read_iob2(path: Path) -> Iterator[NerSentence]:
    """The sentences of an IOB2 file (plain or .gz); a bad row is a `SpacyElmoError` naming the
    file and line."""
    sentence = NerSentence(None)
    for number, line in read_lines(path):
        if line.startswith("#"):
            key, _, value = line[1:].partition("=")
            if key.strip() == "sent_id":
                sentence.sent_id = value.strip()
            elif key.strip() == "text":
                sentence.text = value.strip()
            continue
        if not line.strip():
            if sentence.words:
                yield sentence
            sentence = NerSentence(None)
            continue
        columns = line.split("\t")
        if len(columns) < 3 or not (columns[2] == "O" or columns[2][:2] in ("B-", "I-")):
            raise SpacyElmoError(f"{path}:{number}: expected 'index<TAB>token<TAB>IOB2 tag', got {line[:80]!r}")
        sentence.words.append(columns[1])
        sentence.tags.append(columns[2])
    if sentence.words:
        yield sentence
