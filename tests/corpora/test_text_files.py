"""Corpus files: plain or gzipped UTF-8, with errors that name the file and the line."""
import gzip

import pytest

from spacy_elmo.corpora.text_files import read_lines
from spacy_elmo.errors import SpacyElmoError


def test_lines_are_numbered_from_one_without_their_newline(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("first\n\nthird  \nlast", encoding="utf8")
    assert list(read_lines(path)) == [(1, "first"), (2, ""), (3, "third  "), (4, "last")]


def test_a_gz_file_is_read_gunzipped(tmp_path):
    path = tmp_path / "a.conllu.gz"
    with gzip.open(path, "wt", encoding="utf8") as file:
        file.write("Überraschung\n😀\n")
    assert list(read_lines(path)) == [(1, "Überraschung"), (2, "😀")]


def test_windows_line_breaks_are_dropped(tmp_path):
    path = tmp_path / "crlf.txt"
    path.write_bytes(b"first\r\nsecond\r\n")
    assert list(read_lines(path)) == [(1, "first"), (2, "second")]


def test_a_missing_file_or_a_folder_is_named(tmp_path):
    with pytest.raises(SpacyElmoError, match=f"^no such file: {tmp_path / 'missing.txt'}$"):
        list(read_lines(tmp_path / "missing.txt"))
    with pytest.raises(SpacyElmoError, match=f"^no such file: {tmp_path}$"):
        list(read_lines(tmp_path))


def test_bad_utf8_on_the_first_line_is_named(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(SpacyElmoError, match=r"latin1\.txt:1: not UTF-8 text \(invalid continuation byte\)$"):
        list(read_lines(path))


def test_bad_utf8_on_a_later_line_names_that_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"a\nb\ncaf\xe9\n")
    with pytest.raises(SpacyElmoError, match=r"latin1\.txt:3: not UTF-8"):
        list(read_lines(path))
