"""Vocabulary, corpus reading and row batching of the pretraining data."""

import gzip
import json
import math
from collections import Counter
from pathlib import Path

import pytest

from spacy_elmo.training.batcher import RowBatcher, to_tensors
from spacy_elmo.training.corpus import Cursor, TextCorpus, make_tokenizer
from spacy_elmo.training.errors import CorpusError
from spacy_elmo.training.vocab import SoftmaxVocab


def split(text):
    return text.split()


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf8")
    return path


def test_vocab_from_counts_is_frequency_sorted_with_specials_first():
    counts = Counter({"b": 5, "a": 9, "c": 1, "d": 5, "<S>": 100})
    vocab = SoftmaxVocab.from_counts(counts)
    assert vocab.tokens == ["<S>", "</S>", "<UNK>", "a", "b", "d", "c"]
    assert SoftmaxVocab.from_counts(counts, max_size=5).tokens == ["<S>", "</S>", "<UNK>", "a", "b"]
    assert SoftmaxVocab.from_counts(counts, min_count=5).tokens[3:] == ["a", "b", "d"]
    assert vocab.ids(["a", "zzz", "c"]) == [3, 2, 6]


def test_log_frequencies_are_the_unigram_distribution_of_the_targets():
    counts = Counter({"a": 60, "b": 30, "c": 10, "rare": 0, "out": 20})
    vocab = SoftmaxVocab(["<S>", "</S>", "<UNK>", "a", "b", "c", "rare"])
    # 120 tokens and 10 sentences: 2 × 130 targets over both LMs, 20 of them <UNK> ("out") × 2
    logs = dict(zip(vocab.tokens, vocab.log_frequencies(counts, n_sentences=10)))
    total = 2 * 130 + len(vocab)
    assert math.isclose(math.exp(logs["a"]), 121 / total)
    assert math.isclose(math.exp(logs["<S>"]), 11 / total) and logs["<S>"] == logs["</S>"]
    assert math.isclose(math.exp(logs["<UNK>"]), 41 / total)
    assert math.isclose(math.exp(logs["rare"]), 1 / total)
    assert math.isclose(sum(math.exp(v) for v in logs.values()), 1.0)


def test_vocab_file_round_trip_and_errors(tmp_path):
    vocab = SoftmaxVocab.from_counts(Counter("x y y z z z".split()))
    vocab.to_file(tmp_path / "v.txt")
    assert SoftmaxVocab.from_file(tmp_path / "v.txt").tokens == vocab.tokens
    with pytest.raises(CorpusError, match="must start with"):
        SoftmaxVocab.from_file(write(tmp_path / "bad.txt", "a\nb\nc\n"))
    with pytest.raises(CorpusError, match="not found"):
        SoftmaxVocab.from_file(tmp_path / "missing.txt")


def test_bilm_tf_fixture_vocab_loads(fixtures_dir):
    vocab = SoftmaxVocab.from_file(fixtures_dir / "bilm-tf" / "train" / "vocab.txt")
    assert len(vocab) == 32 and vocab.tokens[:3] == ["<S>", "</S>", "<UNK>"]


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


def test_rows_follow_bilm_tf_streaming():
    sentences = [["a", "b", "c"], ["d"], ["e", "f"], ["g", "h", "i", "j"]]
    stream = ((Cursor(0, 0, i + 1), s) for i, s in enumerate(sentences))
    batcher = RowBatcher(stream, batch_size=1, unroll_steps=4)
    first, second = batcher.next_window(), batcher.next_window()
    assert first.inputs[0] == [["<S>", "a", "b", "c"]] and first.targets[0] == [["a", "b", "c", "</S>"]]
    assert second.inputs[0] == [["</S>", "<S>", "d", "</S>"]] and second.targets[0] == [
        ["<S>", "d", "</S>", "<S>"]
    ]
    assert first.inputs[1] == [["</S>", "c", "b", "a"]] and first.targets[1] == [["c", "b", "a", "<S>"]]
    assert second.inputs[1] == [["<S>", "</S>", "d", "<S>"]]


def test_every_token_is_an_input_once_and_rows_resume_from_state():
    sentences = [[f"t{i}_{j}" for j in range(i % 5 + 1)] for i in range(40)]

    def stream(start=0):
        return ((Cursor(0, 0, i + 1), s) for i, s in enumerate(sentences) if i >= start)

    batcher = RowBatcher(stream(), batch_size=3, unroll_steps=4)
    windows = [batcher.next_window(drain=True)]
    saved = json.loads(json.dumps(batcher.state_dict()))
    rest = []
    while (w := batcher.next_window(drain=True)) is not None:
        rest.append(w)
    inputs = [t for w in windows + rest for row, n in zip(w.inputs[0], w.lengths) for t in row[:n]]
    words = Counter(t for t in inputs if t not in ("<S>", "</S>"))
    assert words == Counter(t for s in sentences for t in s)
    restored = RowBatcher(stream(saved["cursor"]["line"]), 3, 4, Cursor.from_dict(saved["cursor"]), saved)
    again = []
    while (w := restored.next_window(drain=True)) is not None:
        again.append(w)
    assert again == rest


def test_to_tensors_encodes_each_distinct_token_once():
    window = RowBatcher(iter([(Cursor(), ["a", "a", "b"])]), 1, 3).next_window()
    vocab = SoftmaxVocab(["<S>", "</S>", "<UNK>", "a"])
    seen = []

    def encode(tokens):
        seen.append(list(tokens))
        return [[len(t)] * 2 for t in tokens]

    batch = to_tensors(window, encode, vocab)
    assert sorted(seen[0]) == ["</S>", "<S>", "a", "b"]
    assert batch.token_index.shape == (2, 1, 3) and batch.n_tokens == 3
    assert batch.targets.tolist() == [[[3, 3, 2]], [[2, 3, 3]]]
