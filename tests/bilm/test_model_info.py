"""Model cards: pretrain.json in native folders, NLPL meta.json (folder, zip, tar), published
names without a download, and the language a model's text is tokenized in."""
import io
import json
import tarfile
import zipfile

import pytest

from spacy_elmo.bilm.loading import DEFAULT_MODEL
from spacy_elmo.bilm.model_info import model_language, nlpl_info, read_model_info, write_model_info
from spacy_elmo.bilm.published import PUBLISHED

META = {"id": 212, "handle": "http://vectors.nlpl.eu/repository/20/212.zip", "corpus": [{"description": "Araneum", "language": "rus"}]}
CARD = {"name": "nlpl-212", "lang": "ru", "corpus": "Araneum", "url": META["handle"]}


def test_a_written_card_reads_back(tmp_path):
    info = {"name": "mine", "lang": "de", "steps": 12, "tokens": 3400}
    path = write_model_info(tmp_path, info)
    assert path == tmp_path / "pretrain.json"
    assert read_model_info(tmp_path) == info
    assert read_model_info(str(tmp_path)) == info


def test_pretrain_json_wins_over_meta_json(tmp_path):
    (tmp_path / "meta.json").write_text(json.dumps(META))
    assert read_model_info(tmp_path) == CARD
    write_model_info(tmp_path, {"lang": "uk"})
    assert read_model_info(tmp_path) == {"lang": "uk"}


def test_unreadable_or_absent_cards_are_empty(tmp_path):
    assert read_model_info(tmp_path) == {}
    (tmp_path / "pretrain.json").write_text("[1, 2]")  # JSON, but not an object
    assert read_model_info(tmp_path) == {}
    (tmp_path / "pretrain.json").write_bytes(b"\xff{")
    assert read_model_info(tmp_path) == {}
    (tmp_path / "weights.hdf5").write_bytes(b"\x89HDF")
    assert read_model_info(tmp_path / "weights.hdf5") == {}
    assert read_model_info(tmp_path / "missing" / "model.hdf5") == {}  # no such file: nothing known
    assert read_model_info("no_such_bundled_model") == {}


def test_the_shallowest_meta_json_of_an_archive(tmp_path):
    other = {**META, "id": 1, "corpus": [{"language": "eng"}]}
    with zipfile.ZipFile(tmp_path / "m.zip", "w") as handle:
        handle.writestr("a/b/meta.json", json.dumps(other))
        handle.writestr("a/meta.json", json.dumps(META))
    assert read_model_info(tmp_path / "m.zip") == CARD
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as handle:
        for name, meta in (("x/y/meta.json", other), ("x/meta.json", META)):
            data = json.dumps(meta).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            handle.addfile(info, io.BytesIO(data))
    (tmp_path / "m.tar.gz").write_bytes(buffer.getvalue())
    assert read_model_info(tmp_path / "m.tar.gz") == CARD
    with zipfile.ZipFile(tmp_path / "bad.zip", "w") as handle:
        handle.writestr("meta.json", "{not json")
    assert read_model_info(tmp_path / "bad.zip") == {}


@pytest.mark.parametrize(
    "meta, info",
    [
        (META, CARD),
        ({"corpus": {"description": "One", "language": "NOB"}}, {"lang": "nb", "corpus": "One"}),  # a dict, upper case
        ({"language": "xyz", "corpus": [{"description": "A"}, {"description": "B"}]}, {"lang": "xyz", "corpus": "A; B"}),
        ({"id": 0, "handle": 5, "corpus": ["not a dict"]}, {"name": "nlpl-0"}),
        ([META], {}),
        (None, {}),
    ],
)
def test_nlpl_meta_fields(meta, info):
    assert nlpl_info(meta) == info


def test_a_published_name_gives_its_table_card_without_a_download(tmp_path, monkeypatch):
    monkeypatch.setenv("SPACY_ELMO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SPACY_ELMO_OFFLINE", "1")  # a download attempt would raise
    assert read_model_info("efml-de") == PUBLISHED["efml-de"].info()
    assert not (tmp_path / "cache").exists()


def test_a_fetched_published_model_adds_its_files_card_under_the_table(tmp_path, monkeypatch):
    monkeypatch.setenv("SPACY_ELMO_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "nlpl-212" / "model"  # unpacked: it counts as cached
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({**META, "id": 999, "corpus": [{"description": "from the file", "language": "rus"}]}))
    assert read_model_info("nlpl-212") == {**PUBLISHED["nlpl-212"].info()}  # the table's fields win
    (folder / "meta.json").write_text(json.dumps({"handle": "x", "corpus": [{"language": "rus", "size": 1}]}))
    write_model_info(folder, {"steps": 7, "name": "renamed"})
    assert read_model_info("nlpl-212") == {"steps": 7, **PUBLISHED["nlpl-212"].info()}


def test_the_bundled_default_says_its_language():
    assert read_model_info(None)["lang"] == "en" == read_model_info(DEFAULT_MODEL)["lang"]


def test_the_tokenizer_language():
    assert model_language({"lang": "zh"}, "ja") == "ja"  # given wins
    assert model_language({"lang": "zh"}) == "zh"
    assert model_language({"lang": ""}) == "en" and model_language({}) == "en"
