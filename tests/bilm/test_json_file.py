"""The model formats' JSON files: parsed, or one ModelFormatError naming the file."""
import pytest

from spacy_elmo.bilm import ModelFormatError
from spacy_elmo.bilm.json_file import read_json_file


def test_json_is_parsed(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"lstm": {"dim": 4}, "name": "Straße"}', encoding="utf-8")
    assert read_json_file(path) == {"lstm": {"dim": 4}, "name": "Straße"}


def test_invalid_json_names_the_file(tmp_path):
    path = tmp_path / "options.json"
    path.write_text("{lstm", encoding="utf-8")
    with pytest.raises(ModelFormatError) as error:
        read_json_file(path)
    assert str(error.value) == f"{path}: not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"


def test_a_file_that_is_not_utf8_names_the_file(tmp_path):
    path = tmp_path / "options.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ModelFormatError, match=r"options\.json: not valid JSON \('utf-8' codec can't decode byte 0xff"):
        read_json_file(path)
