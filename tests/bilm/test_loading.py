"""`load_bilm`'s resolution of names and folders, beyond the formats (tests/bilm/test_formats.py,
test_original_format.py) and archives (tests/bilm/test_nlpl.py): the default, published names
checked without a download, options refused where a model holds its architecture, and folders
that hold no model."""
import shutil
from pathlib import Path

import pytest
import torch

from spacy_elmo.bilm import BundledModelNotFound, ModelFormatError, export_original, load_bilm, save_bilm
from spacy_elmo.bilm.loading import (
    BUNDLED_DIR,
    DEFAULT_MODEL,
    bundled_models,
    check_model_source,
    check_options,
    original_weights,
    resolve_model_path,
)

from ..conftest import random_bilm


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """An empty cache where any download attempt raises."""
    monkeypatch.setenv("SPACY_ELMO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SPACY_ELMO_OFFLINE", "1")
    return tmp_path / "cache"


def test_names_and_paths_resolve(tmp_path):
    assert resolve_model_path(None) == BUNDLED_DIR / DEFAULT_MODEL
    assert DEFAULT_MODEL in bundled_models() and bundled_models() == sorted(bundled_models())
    assert resolve_model_path(DEFAULT_MODEL) == BUNDLED_DIR / DEFAULT_MODEL
    assert resolve_model_path(str(tmp_path)) == tmp_path  # an existing path wins over names
    with pytest.raises(BundledModelNotFound) as err:
        resolve_model_path("en_huge")
    assert str(err.value).startswith(f"no model named 'en_huge' (bundled: {', '.join(bundled_models())}; ")
    with pytest.raises(ModelFormatError) as err:
        resolve_model_path(tmp_path / "missing" / "model.hdf5")  # path-like: no bundled-name advice
    assert str(err.value) == f"{tmp_path / 'missing' / 'model.hdf5'}: no such file or folder"
    with pytest.raises(ModelFormatError, match="no such file or folder"):
        resolve_model_path("weights.hdf5")  # a suffix: a file name, not a model name


def test_a_published_name_is_checked_without_a_download(offline):
    check_model_source("elmo-small")  # nothing raised, nothing fetched
    check_options("elmo-small", "options.json")  # its options are not questioned either
    assert not offline.exists()
    with pytest.raises(BundledModelNotFound):
        check_model_source("elmo-smal")
    with pytest.raises(ModelFormatError, match="no such file or folder"):
        check_model_source("nowhere/model")


def test_options_are_refused_for_models_that_hold_their_architecture(tmp_path):
    save_bilm(random_bilm(), tmp_path / "native")
    options, _ = export_original(random_bilm(), tmp_path / "original")
    message = f"{tmp_path / 'native'} holds its own architecture; options (--options) is only for original hdf5 weights"
    with pytest.raises(ModelFormatError) as err:
        check_options(tmp_path / "native", options)
    assert str(err.value) == message
    with pytest.raises(ModelFormatError) as err:
        load_bilm(tmp_path / "native", options=options)
    assert str(err.value) == message
    check_options(tmp_path / "native", None)
    check_options(tmp_path / "original", options)  # an original folder may be given its options


def test_the_weights_of_an_original_folder(tmp_path):
    assert original_weights(tmp_path) is None
    (tmp_path / "b.h5").write_bytes(b"")
    assert original_weights(tmp_path) == tmp_path / "b.h5"
    (tmp_path / "a.hdf5").write_bytes(b"")
    assert original_weights(tmp_path) is None  # two candidates: neither
    (tmp_path / "model.hdf5").write_bytes(b"")
    assert original_weights(tmp_path) == tmp_path / "model.hdf5"


def test_a_folder_without_a_model_says_what_a_model_folder_holds(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ModelFormatError) as err:
        load_bilm(tmp_path)
    assert str(err.value).startswith(f"{tmp_path}: not a model folder: neither native (config.json), nor ELMoForManyLangs ")
    save_bilm(random_bilm(), tmp_path / "run" / "model")
    with pytest.raises(ModelFormatError) as err:
        load_bilm(tmp_path / "run")
    assert str(err.value) == (
        f"{tmp_path / 'run'} is a pretraining run's output or checkpoint folder, not a model; its biLM is {tmp_path / 'run' / 'model'}"
    )


def test_original_weights_find_their_options_beside_them(tmp_path):
    bilm = random_bilm(seed=5)
    _, weights = export_original(bilm, tmp_path / "original")
    loaded = load_bilm(weights)  # options.json beside the weights
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), load_bilm(tmp_path / "original").state_dict().values()))
    shutil.move(tmp_path / "original" / "options.json", tmp_path / "options.json")
    with pytest.raises(ModelFormatError) as err:
        load_bilm(weights)
    assert str(err.value) == f"{weights}: original weights need their options; pass options=PATH/TO/options.json"
    assert load_bilm(weights, options=tmp_path / "options.json").n_layers == 3
    assert not load_bilm(Path(weights), options=str(tmp_path / "options.json")).training
