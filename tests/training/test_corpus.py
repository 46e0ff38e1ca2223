"""Reading the pretraining corpus: plain, gzip and JSONL files, bad lines, shards and the cursor."""

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from spacy_elmo.training.corpus import Cursor, TextCorpus, make_tokenizer
from spacy_elmo.training.errors import CorpusError


def split(text):
    return text.split()


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf8")
    return path


def test_corpus_reads_plain_gzip_and_jsonl(tmp_path):
    plain = write(tmp_path / "a.txt", "one two\n\nthree\n")
    zipped = tmp_path / "b.txt.gz"
    with gzip.open(zipped, "wt", encoding="utf8") as f:
        f.write("four five six\n")
    jsonl = write(tmp_path / "c.jsonl", json.dumps({"text": "seven"}) + "\n" + json.dumps({"id": 1}) + "\n")
    corpus = TextCorpus([plain, zipped, jsonl], split)
    assert list(corpus.texts()) == [["one", "two"], ["three"], ["four", "five", "six"], ["seven"]]
    assert corpus.stats.skipped == {"not a JSON object with a 'text' string": 1}


def test_spacy_tokenizer_drops_whitespace_tokens():
    tokenize = make_tokenizer("en")
    assert tokenize("Don't  stop\tnow.") == ["Do", "n't", "stop", "now", "."]


def test_bad_lines_are_skipped_and_counted_with_location(tmp_path, caplog):
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"good line\n\xff\xfe broken\n" + b"x" * 100_000 + b"\nlast one\n")
    corpus = TextCorpus([path], split, max_line_chars=1000)
    counts = Counter()
    with caplog.at_level("WARNING"):
        stats = corpus.scan(counts)
    assert f"skipping {path}:2: not UTF-8" in caplog.text and f"skipping {path}:3: too long" in caplog.text
    assert stats.sentences == 2 and stats.tokens == 4
    assert stats.skipped == {"not UTF-8": 1, "too long (over 1000 characters)": 1}
    assert stats.first_skip["not UTF-8"] == f"{path}:2"
    assert counts == Counter({"good": 1, "line": 1, "last": 1, "one": 1})


@pytest.mark.parametrize(
    "content,message", [(b"", "is empty"), (b"\n  \n", "no sentence"), (b"\xff\xfe\n", "not UTF-8")]
)
def test_files_without_sentences_are_clear_errors(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(CorpusError, match=message) as info:
        TextCorpus([path], split).scan()
    assert str(path) in str(info.value)


def test_missing_file_and_corrupt_gzip_are_clear_errors(tmp_path):
    with pytest.raises(CorpusError, match="not found"):
        TextCorpus([tmp_path / "nope.txt"], split)
    broken = tmp_path / "broken.txt.gz"
    text = "".join(f"line {i} {i * 7919 % 1000003}\n" for i in range(5000)).encode()
    broken.write_bytes(gzip.compress(text)[:-200])
    with pytest.raises(CorpusError, match="broken.txt.gz: cannot read"):
        TextCorpus([broken], split).scan()


def test_shards_split_lines_and_cursor_resumes_exactly(tmp_path):
    path = write(tmp_path / "t.txt", "".join(f"w{i}\n" for i in range(10)))
    shards = [[s for _, s in TextCorpus([path], split, shard=(r, 2)).sentences(Cursor(), 1)] for r in range(2)]
    assert shards == [[[f"w{i}"] for i in range(0, 10, 2)], [[f"w{i}"] for i in range(1, 10, 2)]]
    corpus = TextCorpus([path], split)
    stream = list(corpus.sentences(Cursor(), 3))
    assert len(stream) == 30 and stream[10][0].epoch == 1
    cursor = stream[13][0]
    assert [s for _, s in corpus.sentences(cursor, 3)] == [s for _, s in stream[14:]]
