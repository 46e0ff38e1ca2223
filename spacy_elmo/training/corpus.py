"""Raw text files to tokenized sentences: plain text or JSONL, optionally gzipped.

Every line is one sentence or paragraph (JSONL: the "text" field of each object). Lines that
cannot be used (not UTF-8, too long, bad JSON) are skipped and counted; a file that yields no
sentence at all is an error. `scan` reads everything once before training, so such problems
surface before hours of training rather than during them.
"""

import gzip
import json
import logging
import random
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .errors import CorpusError, TrainingSetupError

logger = logging.getLogger(__name__)
Tokenizer = Callable[[str], List[str]]
DEFAULT_MAX_LINE_CHARS = 20_000
JSONL_SUFFIXES = (".jsonl", ".ndjson")
SKIP_NOT_UTF8 = "not UTF-8"
SKIP_TOO_LONG = "too long"
SKIP_BAD_JSON = "not a JSON object with a 'text' string"


def make_tokenizer(lang: str) -> Tokenizer:
    """spaCy's tokenizer for `lang` (the component's tokens at inference); whitespace tokens dropped."""
    import spacy

    try:
        nlp = spacy.blank(lang)
    except (ImportError, KeyError, ValueError) as err:
        raise TrainingSetupError(f"spaCy has no tokenizer for language {lang!r} ({err})") from None
    tokenizer = nlp.tokenizer

    def tokenize(text: str) -> List[str]:
        return [token.text for token in tokenizer(text) if not token.is_space]

    return tokenize


@dataclass
class Cursor:
    """Where reading continues: epoch, slot in that epoch's file order, lines of that file read."""

    epoch: int = 0
    file: int = 0
    line: int = 0

    def to_dict(self) -> Dict[str, int]:
        return {"epoch": self.epoch, "file": self.file, "line": self.line}

    @classmethod
    def from_dict(cls, data: Dict[str, int]) -> "Cursor":
        return cls(int(data["epoch"]), int(data["file"]), int(data["line"]))


@dataclass
class CorpusStats:
    """Counts from reading a corpus: lines, sentences, tokens, and skipped lines by reason."""

    lines: int = 0
    sentences: int = 0
    tokens: int = 0
    skipped: Counter = field(default_factory=Counter)
    first_skip: Dict[str, str] = field(default_factory=dict)

    @property
    def stream_tokens(self) -> int:
        """Positions one epoch adds to the training stream: every token and both markers of
        every sentence (<S> ... </S>)."""
        return self.tokens + 2 * self.sentences

    def skip(self, reason: str, where: str) -> None:
        """Count a skipped line; the first of each reason is also logged, naming file:line."""
        self.skipped[reason] += 1
        if reason not in self.first_skip:
            self.first_skip[reason] = where
            logger.warning("skipping %s: %s (further such lines are counted)", where, reason)

    def to_dict(self) -> Dict[str, Any]:
        """The counts as run.json keeps them."""
        return {"lines": self.lines, "sentences": self.sentences, "tokens": self.tokens,
                "skipped": dict(self.skipped), "first_skip": dict(self.first_skip)}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "CorpusStats":
        """The counts of `to_dict`."""
        return cls(data["lines"], data["sentences"], data["tokens"], Counter(data["skipped"]), dict(data["first_skip"]))

    def describe_skips(self) -> str:
        """E.g. "3 lines not UTF-8 (first: a.txt:12)"; empty when nothing was skipped."""
        return "; ".join(
            f"{n} line{'s' if n > 1 else ''} {reason} (first: {self.first_skip[reason]})"
            for reason, n in sorted(self.skipped.items())
        )


class TextCorpus:
    """Tokenized sentences from text files, streamed in a reproducible order.

    paths (Sequence[Path]): the files; ".gz" files are decompressed, ".jsonl"/".ndjson" read as JSON lines.
    tokenizer (Tokenizer): splits a line into tokens.
    max_line_chars (int): longer lines are skipped (counted).
    shard (Tuple[int, int]): (rank, world size): this process reads lines with index % world == rank.
    seed (int): shuffles the file order of each epoch when there are several files.
    """

    def __init__(
        self,
        paths: Sequence[Path],
        tokenizer: Tokenizer,
        max_line_chars: int = DEFAULT_MAX_LINE_CHARS,
        shard: Tuple[int, int] = (0, 1),
        seed: int = 0,
    ) -> None:
        if not paths:
            raise CorpusError("no text files given")
        self.paths = [Path(p) for p in paths]
        for path in self.paths:
            if not path.is_file():
                raise CorpusError(f"text file not found: {path}")
        self.tokenizer = tokenizer
        self.max_line_chars = max_line_chars
        self.rank, self.world_size = shard
        self.seed = seed
        self.stats = CorpusStats()

    def file_order(self, epoch: int) -> List[int]:
        """Indices into `paths` in the order epoch `epoch` reads them."""
        order = list(range(len(self.paths)))
        if len(order) > 1:
            random.Random(self.seed * 1_000_003 + epoch).shuffle(order)
        return order

    def sentences(self, start: Cursor, n_epochs: Optional[int] = None) -> Iterator[Tuple[Cursor, List[str]]]:
        """Yield (cursor after the sentence, tokens) from `start` on, for `n_epochs` epochs in all
        (None: forever). Resuming at a yielded cursor continues exactly after that sentence."""
        epoch, slot, skip_lines = start.epoch, start.file, start.line
        while n_epochs is None or epoch < n_epochs:
            order = self.file_order(epoch)
            found = epoch == start.epoch and (start.file > 0 or start.line > 0)  # a partial epoch may be empty
            while slot < len(order):
                for line_no, tokens in self._file_sentences(self.paths[order[slot]], skip_lines):
                    found = True
                    yield Cursor(epoch, slot, line_no), tokens
                slot, skip_lines = slot + 1, 0
            if not found:
                raise CorpusError(
                    f"process {self.rank} of {self.world_size} found no sentence in its share of the text"
                )
            epoch, slot = epoch + 1, 0

    def texts(self) -> Iterator[List[str]]:
        """Every sentence of one pass over the files in the given order (for evaluation)."""
        for path in self.paths:
            for _, tokens in self._file_sentences(path, 0):
                yield tokens

    def scan(self, counts: Optional[Counter] = None) -> CorpusStats:
        """Read all files once (all shards), check each yields sentences, and count tokens into `counts`."""
        total = CorpusStats()
        for path in self.paths:
            if path.stat().st_size == 0:
                raise CorpusError(f"{path} is empty")
            stats = CorpusStats()
            for _, tokens in self._file_sentences(path, 0, stats, all_shards=True):
                if counts is not None:
                    counts.update(tokens)
            if stats.sentences == 0:
                detail = f" ({stats.describe_skips()})" if stats.skipped else ""
                raise CorpusError(f"{path}: no sentence found in {stats.lines} lines{detail}")
            total.lines += stats.lines
            total.sentences += stats.sentences
            total.tokens += stats.tokens
            total.skipped.update(stats.skipped)
            for reason, where in stats.first_skip.items():
                total.first_skip.setdefault(reason, where)
        return total

    def _file_sentences(
        self, path: Path, skip_lines: int, stats: Optional[CorpusStats] = None, all_shards: bool = False
    ) -> Iterator[Tuple[int, List[str]]]:
        """Yield (lines read so far, tokens) for this shard's usable lines of `path`."""
        stats = self.stats if stats is None else stats
        jsonl = _is_jsonl(path)
        line_no = 0
        try:
            with _open_binary(path) as file:
                for raw in file:
                    line_no += 1
                    if line_no <= skip_lines:
                        continue
                    if not all_shards and (line_no - 1) % self.world_size != self.rank:
                        continue
                    stats.lines += 1
                    text = self._line_text(raw, jsonl, stats, f"{path}:{line_no}")
                    if not text:
                        continue
                    tokens = self.tokenizer(text)
                    if tokens:
                        stats.sentences += 1
                        stats.tokens += len(tokens)
                        yield line_no, tokens
        except (OSError, EOFError, zlib.error) as err:
            raise CorpusError(f"{path}: cannot read past line {line_no} ({err})") from None

    def _line_text(self, raw: bytes, jsonl: bool, stats: CorpusStats, where: str) -> str:
        try:
            text = raw.decode("utf8")
        except UnicodeDecodeError:
            stats.skip(SKIP_NOT_UTF8, where)
            return ""
        if jsonl:
            if not text.strip():
                return ""
            try:
                record = json.loads(text)
            except json.JSONDecodeError:
                record = None
            if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                stats.skip(SKIP_BAD_JSON, where)
                return ""
            text = record["text"]
        text = text.strip()
        if len(text) > self.max_line_chars:
            stats.skip(f"{SKIP_TOO_LONG} (over {self.max_line_chars} characters)", where)
            return ""
        return text


def _is_jsonl(path: Path) -> bool:
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    return name.endswith(JSONL_SUFFIXES)


def _open_binary(path: Path):  # type: ignore[no-untyped-def]
    return gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")
