"""bilm-tf's original format (options.json + the hdf5 of `dump_weights`): export and load round
trips, the variants of the architecture, one-layer names, and errors that name the dataset or file
(the reference outputs of the fixtures' weights: tests/bilm/test_original_weights.py)."""
import dataclasses
import json
import shutil

import h5py
import numpy as np
import pytest

from spacy_elmo import load_bilm
from spacy_elmo.bilm import BiLMArchitecture, ModelFormatError, export_original

from ..conftest import TINY_CONFIG, random_bilm
from .helpers import assert_same_outputs, published_options


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


def test_a_one_layer_lstm_named_without_multirnncell_loads(tmp_path):
    bilm = random_bilm(dataclasses.replace(TINY_CONFIG, n_layers=1))
    options_path, weights_path = export_original(bilm, tmp_path)
    with h5py.File(weights_path, "a") as handle:
        for d in range(2):
            handle.move(f"RNN_{d}/RNN/MultiRNNCell/Cell0/LSTMCell", f"RNN_{d}/RNN/LSTMCell")
            del handle[f"RNN_{d}/RNN/MultiRNNCell"]
        assert "RNN_0/RNN/LSTMCell/W_0" in handle and "RNN_0/RNN/MultiRNNCell" not in handle
    assert_same_outputs(bilm, load_bilm(weights_path, options=options_path))


def test_the_exported_options_and_lstm_datasets_are_bilm_tfs(tmp_path):
    bilm = random_bilm()
    options_path, weights_path = export_original(bilm, tmp_path, weights_name="lm.hdf5")
    assert weights_path == tmp_path / "lm.hdf5" and options_path == tmp_path / "options.json"
    assert BiLMArchitecture.from_options_json(json.loads(options_path.read_text())) == bilm.config
    layer, cell = bilm.lstm.layers[0], bilm.lstm.layers[0].cell_dim
    with h5py.File(weights_path, "r") as handle:
        bias = handle["RNN_1/RNN/MultiRNNCell/Cell0/LSTMCell/B"][...]
        kernel = handle["RNN_1/RNN/MultiRNNCell/Cell0/LSTMCell/W_0"][...]
    ours = layer.bias[1].detach().numpy()  # gate blocks i, f, o, g; TensorFlow's are i, g, f, o
    tf_blocks = [ours[:cell], ours[3 * cell :], ours[cell : 2 * cell] - 1.0, ours[2 * cell : 3 * cell]]
    np.testing.assert_allclose(bias, np.concatenate(tf_blocks), atol=1e-7)
    n_in = layer.input_weight.shape[2]
    assert kernel.shape == (n_in + layer.output_dim, 4 * cell)
    np.testing.assert_allclose(kernel[:n_in, :cell], layer.input_weight[1, :cell].detach().numpy().T, atol=1e-7)
