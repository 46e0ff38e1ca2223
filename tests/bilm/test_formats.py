"""Native format round trips, loading errors that name the problem, options and published
architectures (bilm-tf's original format itself: tests/bilm/test_original_format.py)."""
import dataclasses
import json
import shutil

import numpy as np
import pytest
import torch

from spacy_elmo import load_bilm
from spacy_elmo.bilm import BiLMArchitecture, ModelFormatError, bilm_from_bytes, bilm_to_bytes, save_bilm

from ..conftest import TINY_CONFIG, random_bilm
from .helpers import PUBLISHED, assert_same_outputs, published_options


def test_native_round_trip(tmp_path):
    bilm = random_bilm()
    save_bilm(bilm, tmp_path / "model")
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == ["config.json", "model.safetensors"]
    assert_same_outputs(bilm, load_bilm(tmp_path / "model"))


def test_bytes_round_trip_with_softmax_and_vocab():
    bilm = random_bilm()
    bilm.set_softmax(["<S>", "</S>", "<UNK>", "the"])
    loaded = bilm_from_bytes(bilm_to_bytes(bilm))
    assert loaded.vocab == ["<S>", "</S>", "<UNK>", "the"]
    assert np.array_equal(loaded.softmax.weight.detach().numpy(), bilm.softmax.weight.detach().numpy())
    assert_same_outputs(bilm, loaded)


def test_float16_storage_stays_close(tmp_path):
    bilm = random_bilm()
    save_bilm(bilm, tmp_path / "half", storage_dtype="float16")
    loaded = load_bilm(tmp_path / "half")
    assert loaded.dtype.is_floating_point and str(loaded.dtype) == "torch.float32"
    assert_same_outputs(bilm, loaded, atol=1e-2)


def test_float16_softmax_storage_keeps_embeddings_exact(tmp_path):
    bilm = random_bilm()
    bilm.set_softmax(["<S>", "</S>", "<UNK>", "a", "b"])
    save_bilm(bilm, tmp_path / "full")
    save_bilm(bilm, tmp_path / "mixed", storage_dtype="float16-softmax")
    with pytest.raises(TypeError, match="dtype"):
        save_bilm(bilm, tmp_path / "old", dtype="float16")  # the name removed in 0.3.0
    loaded = load_bilm(tmp_path / "mixed")
    assert_same_outputs(bilm, loaded, atol=0.0)
    softmax = bilm.softmax.weight.detach()
    assert torch.equal(loaded.softmax.weight.detach(), softmax.half().float())
    assert (tmp_path / "mixed" / "model.safetensors").stat().st_size < (tmp_path / "full" / "model.safetensors").stat().st_size


@pytest.mark.parametrize(
    "change, message",
    [
        ({"char_cnn": {"activation": "gelu"}}, "activation"),
        ({"char_cnn": {"n_characters": 300}}, "n_characters"),
        ({"lstm": {"projection_dim": 128}}, "projection_dim"),
    ],
)
def test_unsupported_options_are_rejected(tmp_path, model_files, change, message):
    options = json.loads(model_files[1].read_text())
    for section, values in change.items():
        options[section].update(values)
    (tmp_path / "options.json").write_text(json.dumps(options))
    with pytest.raises(ModelFormatError, match=message):
        load_bilm(model_files[0], options=tmp_path / "options.json")


def test_missing_files_are_named(tmp_path, model_files):
    weights, options = model_files
    with pytest.raises(ModelFormatError, match="nothere.hdf5"):
        load_bilm(tmp_path / "nothere.hdf5", options=options)
    with pytest.raises(ModelFormatError, match="options file not found"):
        load_bilm(weights, options=tmp_path / "options.json")
    shutil.copy(weights, tmp_path / "w.hdf5")
    with pytest.raises(ModelFormatError, match="options"):
        load_bilm(tmp_path / "w.hdf5")


def test_a_text_file_is_named_as_not_hdf5_before_options_are_asked_for(tmp_path):
    (tmp_path / "notes.txt").write_text("not weights\n")
    with pytest.raises(ModelFormatError, match="notes.txt: not an HDF5 file"):
        load_bilm(tmp_path / "notes.txt")


def test_native_folder_errors(tmp_path):
    bilm = random_bilm()
    save_bilm(bilm, tmp_path / "m")
    (tmp_path / "m" / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(ModelFormatError, match="model.safetensors"):
        load_bilm(tmp_path / "m")
    with pytest.raises(ModelFormatError, match="not a serialized"):
        bilm_from_bytes(b"\x00" * 20)
    save_bilm(random_bilm(dataclasses.replace(TINY_CONFIG, lstm_dim=32)), tmp_path / "other")
    shutil.copy(tmp_path / "other" / "model.safetensors", tmp_path / "m" / "model.safetensors")
    with pytest.raises(ModelFormatError, match="has shape"):
        load_bilm(tmp_path / "m")


def test_bundled_names_and_bad_arguments(tmp_path):
    from spacy_elmo.bilm import BundledModelNotFound

    with pytest.raises(BundledModelNotFound, match="no_such_model"):
        load_bilm("no_such_model")
    save_bilm(random_bilm(), tmp_path / "m")
    with pytest.raises(ValueError, match="dtype"):
        load_bilm(tmp_path / "m", compute_dtype="float8")
    with pytest.raises(ValueError, match="device"):
        load_bilm(tmp_path / "m", device="tpu:7")


def test_config_round_trips_through_options():
    options = TINY_CONFIG.to_options_json()
    assert BiLMArchitecture.from_options_json(options) == TINY_CONFIG
    with pytest.raises(ModelFormatError, match="missing key 'lstm.dim'"):
        BiLMArchitecture.from_options_json({"lstm": {}, "char_cnn": options["char_cnn"]})


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_architectures_have_the_published_sizes(name):
    from spacy_elmo.bilm import BiLM

    bilm = BiLM(BiLMArchitecture.from_options_json(published_options(name)))
    # The char table has one extra all-zero row (id 0) that the weight files do not store.
    stored = sum(p.numel() for p in bilm.parameters()) - bilm.config.char_embedding_dim
    assert stored == PUBLISHED[name][3]
