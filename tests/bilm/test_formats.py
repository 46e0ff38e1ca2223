"""Native and original formats: round trips, variants and errors that name the problem."""
import dataclasses
import json
import shutil

import h5py
import numpy as np
import pytest
import torch

from spacy_elmo import load_bilm
from spacy_elmo.bilm import BiLMArchitecture, ModelFormatError, bilm_from_bytes, bilm_to_bytes, export_original, save_bilm

from ..conftest import TINY_CONFIG, random_bilm

SENTENCES = [["Hello", "world", "!"], ["ELMo", "vectors", "depend", "on", "context"], []]


def assert_same_outputs(a, b, atol=1e-6):
    for x, y in zip(a.embed_sentences(SENTENCES), b.embed_sentences(SENTENCES)):
        np.testing.assert_allclose(x, y, atol=atol)


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


def test_fixture_export_round_trip_reproduces_outputs(tmp_path, allennlp_model_files):
    weights, options = allennlp_model_files
    original = load_bilm(weights, options=options)
    export_original(original, tmp_path)
    with h5py.File(weights, "r") as a, h5py.File(tmp_path / "weights.hdf5", "r") as b:
        names = []
        a.visititems(lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) else None)
        assert len(names) == 33
        for name in names:
            assert np.allclose(a[name][...], b[name][...], atol=1e-7), name
    assert_same_outputs(original, load_bilm(tmp_path / "weights.hdf5", options=tmp_path / "options.json"))
    assert_same_outputs(original, load_bilm(tmp_path))  # a folder with options.json + one hdf5


VARIANTS = {
    "no_skip": dict(use_skip_connections=False),
    "no_highway": dict(n_highway=0),
    "no_token_projection": dict(filters=((1, 4), (2, 4)), projection_dim=8),
    "no_lstm_projection": dict(lstm_dim=8, projection_dim=8),
    "one_layer": dict(n_layers=1),
    "tanh_no_clips": dict(activation="tanh", cell_clip=None, proj_clip=None),
    "training_options": dict(n_characters=261),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variants_export_and_load(tmp_path, variant):
    config = dataclasses.replace(TINY_CONFIG, **VARIANTS[variant])
    bilm = random_bilm(config)
    options_path, weights_path = export_original(bilm, tmp_path)
    with h5py.File(weights_path, "r") as handle:
        assert ("CNN_proj" in handle) == config.has_token_projection
        assert ("W_P_0" in handle["RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell"]) == config.has_lstm_projection
    assert_same_outputs(bilm, load_bilm(weights_path, options=options_path))


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


def test_truncated_hdf5_is_named(tmp_path, model_files):
    weights, options = model_files
    data = weights.read_bytes()
    for size in (100, len(data) // 2):
        (tmp_path / "cut.hdf5").write_bytes(data[:size])
        with pytest.raises(ModelFormatError, match="cut.hdf5.*(truncated|corrupted)"):
            load_bilm(tmp_path / "cut.hdf5", options=options)


def test_missing_and_misshapen_datasets_are_named(tmp_path, model_files):
    weights, options = model_files
    shutil.copy(weights, tmp_path / "w.hdf5")
    with h5py.File(tmp_path / "w.hdf5", "a") as handle:
        del handle["CNN_high_1/W_carry"]
    with pytest.raises(ModelFormatError, match="missing dataset 'CNN_high_1/W_carry'"):
        load_bilm(tmp_path / "w.hdf5", options=options)
    shutil.copy(weights, tmp_path / "w.hdf5")
    with h5py.File(tmp_path / "w.hdf5", "a") as handle:
        del handle["CNN/b_cnn_0"]
        handle["CNN/b_cnn_0"] = np.zeros(5, dtype=np.float32)
    with pytest.raises(ModelFormatError, match=r"'CNN/b_cnn_0' has shape \(5,\).*\(4,\)"):
        load_bilm(tmp_path / "w.hdf5", options=options)


def test_options_of_another_model_are_detected(fixtures_dir, allennlp_model_files, tmp_path):
    weights, options = allennlp_model_files
    other = json.loads(options.read_text())
    other["char_cnn"]["n_highway"] = 1
    (tmp_path / "options.json").write_text(json.dumps(other))
    with pytest.raises(ModelFormatError, match="CNN_high_1.*not described"):
        load_bilm(weights, options=tmp_path / "options.json")
    other = json.loads(options.read_text())
    other["lstm"]["dim"] = 32
    (tmp_path / "options.json").write_text(json.dumps(other))
    with pytest.raises(ModelFormatError, match="has shape"):
        load_bilm(weights, options=tmp_path / "options.json")


def test_non_finite_weights_are_rejected(tmp_path, model_files):
    weights, options = model_files
    shutil.copy(weights, tmp_path / "w.hdf5")
    with h5py.File(tmp_path / "w.hdf5", "a") as handle:
        handle["CNN/b_cnn_0"][0] = np.nan
    with pytest.raises(ModelFormatError, match="NaN"):
        load_bilm(tmp_path / "w.hdf5", options=options)


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


PUBLISHED_FILTERS = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]
PUBLISHED = {  # name: (lstm.dim, projection_dim, n_highway, parameters as published)
    "small": (1024, 128, 1, 13_593_296),
    "medium": (2048, 256, 1, 28_027_728),
    "original": (4096, 512, 2, 93_600_848),
    "original_5.5B": (4096, 512, 2, 93_600_848),
}


def published_options(name: str) -> dict:
    dim, projection, n_highway, _ = PUBLISHED[name]
    return {
        "lstm": {"use_skip_connections": True, "projection_dim": projection, "cell_clip": 3,
                 "proj_clip": 3, "dim": dim, "n_layers": 2},
        "char_cnn": {"activation": "relu", "filters": PUBLISHED_FILTERS, "n_highway": n_highway,
                     "embedding": {"dim": 16}, "n_characters": 262, "max_characters_per_token": 50},
    }


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_architectures_have_the_published_sizes(name):
    from spacy_elmo.bilm import BiLM

    bilm = BiLM(BiLMArchitecture.from_options_json(published_options(name)))
    # The char table has one extra all-zero row (id 0) that the weight files do not store.
    stored = sum(p.numel() for p in bilm.parameters()) - bilm.config.char_embedding_dim
    assert stored == PUBLISHED[name][3]


def test_published_small_architecture_loads_from_the_original_layout(tmp_path):
    config = BiLMArchitecture.from_options_json(published_options("small"))
    bilm = random_bilm(config)
    options_path, weights_path = export_original(bilm, tmp_path)
    (tmp_path / "options.json").write_text(json.dumps(published_options("small")))
    with h5py.File(weights_path, "r") as handle:
        names = []
        handle.visititems(lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) else None)
    assert len(names) == 1 + 14 + 4 + 2 + 2 * 2 * 3  # char_embed, CNN, highway, projection, LSTMs
    assert_same_outputs(bilm, load_bilm(weights_path, options=options_path), atol=1e-5)
