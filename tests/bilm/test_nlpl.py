"""NLPL vector repository archives (simple_elmo's layout) and folders unpacked from them."""
import gzip
import json
import shutil
import zipfile
from pathlib import Path

import pytest
import torch

from spacy_elmo.bilm import ModelFormatError, export_original, load_bilm
from spacy_elmo.bilm.model_info import read_model_info

from ..conftest import random_bilm

META = {
    "id": 218,
    "handle": "http://vectors.nlpl.eu/repository/20/218.zip",
    "corpus": [{"description": "Norsk Aviskorpus", "language": "nor"}, {"description": "Norwegian Wikipedia"}],
}


@pytest.fixture
def folder(tmp_path):
    folder = tmp_path / "218"
    export_original(random_bilm(seed=3), folder, weights_name="model.hdf5")
    (folder / "meta.json").write_text(json.dumps(META))
    with gzip.open(folder / "vocab.txt.gz", "wt", encoding="utf8") as out:
        out.write("<S>\n</S>\n<UNK>\nog\n")
    return folder


def zip_folder(folder, path, extra=()):
    with zipfile.ZipFile(path, "w") as handle:
        for file in sorted(folder.iterdir()):
            handle.write(file, file.name)
        for name, data in extra:
            handle.writestr(name, data)
    return path


def same_weights(a, b):
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_a_zip_loads_as_its_weights_and_options(folder, tmp_path):
    direct = load_bilm(folder / "model.hdf5", options=folder / "options.json")
    assert same_weights(load_bilm(zip_folder(folder, tmp_path / "218.zip")), direct)
    assert same_weights(load_bilm(folder), direct)


def test_the_only_hdf5_is_the_weights_and_model_hdf5_wins_over_others(folder, tmp_path):
    direct = load_bilm(folder / "model.hdf5", options=folder / "options.json")
    shutil.move(folder / "model.hdf5", folder / "elmo_weights.hdf5")
    assert same_weights(load_bilm(folder), direct)
    export_original(random_bilm(seed=4), tmp_path / "other", weights_name="model.hdf5")
    shutil.copy(tmp_path / "other" / "model.hdf5", folder / "model.hdf5")
    assert not same_weights(load_bilm(folder), direct)  # model.hdf5, not elmo_weights.hdf5
    (folder / "model.hdf5").unlink()
    shutil.copy(folder / "elmo_weights.hdf5", folder / "second.hdf5")
    with pytest.raises(ModelFormatError, match="model.hdf5 or exactly one .hdf5"):
        load_bilm(folder)


def test_meta_json_gives_the_language_and_corpus(folder, tmp_path):
    expected = {"name": "nlpl-218", "lang": "nb", "corpus": "Norsk Aviskorpus; Norwegian Wikipedia", "url": META["handle"]}
    assert read_model_info(folder) == expected
    assert read_model_info(zip_folder(folder, tmp_path / "218.zip")) == expected


def test_members_outside_the_model_folder_are_not_written(folder, tmp_path):
    archive = zip_folder(folder, tmp_path / "a.zip", extra=[("../escaped.txt", "x"), ("sub/options.json", "{}")])
    assert load_bilm(archive).n_layers == 3
    assert not (tmp_path.parent / "escaped.txt").exists()


def test_an_archive_without_a_model_and_a_broken_one_are_named(tmp_path):
    with zipfile.ZipFile(tmp_path / "empty.zip", "w") as handle:
        handle.writestr("README.txt", "nothing here")
    with pytest.raises(ModelFormatError, match="empty.zip: no model inside"):
        load_bilm(tmp_path / "empty.zip")
    zipped = zip_folder(Path(__file__).parents[1] / "fixtures" / "efml", tmp_path / "efml.zip")
    data = zipped.read_bytes()
    zipped.write_bytes(data[: len(data) // 2] + data[-200:])
    with pytest.raises(ModelFormatError, match="efml.zip"):
        load_bilm(zipped)


def test_an_error_inside_an_archive_names_the_archive(folder, tmp_path):
    (folder / "options.json").write_text("{not json")
    with pytest.raises(ModelFormatError, match=r"218\.zip: in the archive: .*options\.json: not valid JSON"):
        load_bilm(zip_folder(folder, tmp_path / "218.zip"))
