"""vocab.txt: one token per line, read back in order, with one-line errors naming the file."""
import pytest

from spacy_elmo.bilm import ModelFormatError
from spacy_elmo.bilm.vocab_file import read_vocab, write_vocab
from spacy_elmo.errors import SpacyElmoError


def test_written_tokens_read_back_in_order(tmp_path):
    path = tmp_path / "vocab.txt"
    write_vocab(path, ["<S>", "</S>", "<UNK>", "Straße", "中文"])
    assert path.read_text(encoding="utf8") == "<S>\n</S>\n<UNK>\nStraße\n中文\n"
    assert read_vocab(str(path)) == ["<S>", "</S>", "<UNK>", "Straße", "中文"]


def test_surrounding_whitespace_is_dropped(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("a \r\n b\n", encoding="utf8")
    assert read_vocab(path) == ["a", "b"]


def test_a_missing_file_is_named_with_the_callers_error(tmp_path):
    with pytest.raises(ModelFormatError) as error:
        read_vocab(tmp_path / "nope.txt", error=ModelFormatError)
    assert str(error.value) == f"vocabulary file not found: {tmp_path / 'nope.txt'}"


def test_an_empty_line_is_named(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("a\nb\n\nc\n", encoding="utf8")
    with pytest.raises(SpacyElmoError) as error:
        read_vocab(path)
    assert type(error.value) is SpacyElmoError
    assert str(error.value) == f"{path}: line 3 is empty; expected one token per line"


def test_a_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"a\n\xff\n")
    with pytest.raises(SpacyElmoError) as error:
        read_vocab(path)
    assert str(error.value) == f"{path}: the vocabulary is not UTF-8 (invalid start byte at byte 2)"
