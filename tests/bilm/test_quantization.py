"""dtype="int8": refused where it cannot run, close to float32 where it runs, never chosen silently."""
import json

import h5py
import numpy as np
import pytest
import spacy
import torch
from typer.testing import CliRunner

from spacy_elmo.allennlp import Elmo, ElmoEmbedder, batch_to_ids
from spacy_elmo.bilm import bilm_from_bytes, bilm_to_bytes, load_bilm
from spacy_elmo.bilm import quantization
from spacy_elmo.bilm.quantization import Int8Unsupported, check_int8, int8_engine, is_int8, quantize_int8
from spacy_elmo.cli.app import app
from spacy_elmo.cli.main import main  # noqa: F401  (registers the commands)
from spacy_elmo.errors import ConfigError
from spacy_elmo.layers.elmo_model import ElmoModelSettings

from ..conftest import random_bilm

LINES = ["The cat sat on the mat .", "A second line , with more words .", "Colorless green ideas sleep furiously ."]
# Per layer, over all tokens: cosine of int8 against float32, and |int8 - float32| / |float32|.
MIN_COSINE = 0.99
MAX_RELATIVE_ERROR = 0.06


def fixture_sentences(fixtures_dir):
    sentences = json.loads((fixtures_dir / "allennlp" / "sentences.json").read_text())
    return [line.split() for batch in sentences for line in batch]


def assert_close_per_layer(expected, actual):
    """Per layer: cosine >= MIN_COSINE and relative error <= MAX_RELATIVE_ERROR, over all tokens."""
    expected = np.concatenate(expected, axis=1)
    actual = np.concatenate(actual, axis=1)
    assert expected.shape == actual.shape and actual.dtype == np.float32
    for layer, (x, y) in enumerate(zip(expected, actual)):
        x, y = x.ravel().astype(np.float64), y.ravel().astype(np.float64)
        cosine = x @ y / np.linalg.norm(x) / np.linalg.norm(y)
        relative = np.linalg.norm(x - y) / np.linalg.norm(x)
        assert cosine >= MIN_COSINE and relative <= MAX_RELATIVE_ERROR, (layer, cosine, relative)


@pytest.fixture(scope="module")
def float_and_int8(allennlp_model_files):
    weights, options = allennlp_model_files
    return load_bilm(weights, options=options), load_bilm(weights, options=options, compute_dtype="int8")


# --- refused where it cannot run --------------------------------------------------------------


@pytest.mark.parametrize("target", ["cuda", "cuda:1", "mps"])
def test_int8_is_refused_off_the_cpu_naming_the_fallback(target):
    with pytest.raises(Int8Unsupported, match="CPU only.*use dtype bfloat16 or float32"):
        check_int8(target)
    with pytest.raises(Int8Unsupported, match="CPU only"):
        quantization.to_compute_dtype(random_bilm(), target, "int8")


def test_int8_is_refused_by_a_torch_without_an_x86_engine(monkeypatch, allennlp_model_files):
    weights, options = allennlp_model_files
    monkeypatch.setattr(type(torch.backends.quantized), "supported_engines", property(lambda self: ["qnnpack", "none"]))
    with pytest.raises(Int8Unsupported, match="this torch build has qnnpack: use dtype float32"):
        load_bilm(weights, options=options, compute_dtype="int8")
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": str(weights), "options": str(options), "device": "cpu", "compute_dtype": "int8"}})
    with pytest.raises(ConfigError, match="elmo model: dtype int8 needs one of PyTorch's x86 quantized CPU engines"):
        nlp.initialize()
    # float32 does not need the engine
    assert not is_int8(load_bilm(weights, options=options))


def test_the_engine_is_onednn_with_vnni_else_x86_with_7_bit_activations():
    assert int8_engine(["qnnpack", "onednn", "x86", "fbgemm"], vnni=True) == ("onednn", False)
    assert int8_engine(["qnnpack", "onednn", "x86", "fbgemm"], vnni=False) == ("x86", True)
    assert int8_engine(["fbgemm"], vnni=True) == ("fbgemm", True)
    with pytest.raises(Int8Unsupported):
        int8_engine([], vnni=True)


def test_int8_is_never_a_cast_and_never_trains():
    from spacy_elmo.runtime import check_compute_dtype, torch_dtype
    from spacy_elmo.training.errors import TrainingSetupError
    from spacy_elmo.training.settings import TrainingSettings

    assert check_compute_dtype("int8") == "int8"
    with pytest.raises(ConfigError, match="not a cast"):
        torch_dtype("int8")
    with pytest.raises(TrainingSetupError, match="inference only"):
        TrainingSettings(compute_dtype="int8")
    with pytest.raises(ConfigError, match="unknown 'compute_dtype' 'int4'"):
        ElmoModelSettings(compute_dtype="int4")


# --- close to float32; float32 unchanged ------------------------------------------------------


def test_float32_stays_float32_and_int8_is_close_on_the_fixtures(float_and_int8, fixtures_dir):
    float_bilm, int8_bilm = float_and_int8
    assert not is_int8(float_bilm) and is_int8(int8_bilm)
    assert all(p.dtype == torch.float32 for p in float_bilm.parameters())
    sentences = fixture_sentences(fixtures_dir)
    expected = float_bilm.embed_sentences(sentences)
    actual = int8_bilm.embed_sentences(sentences)
    assert_close_per_layer(expected, actual)
    assert not np.array_equal(expected[0], actual[0])  # int8 really ran
    # the float32 model is the one AllenNLP's fixtures check, bit for bit as before
    with h5py.File(fixtures_dir / "allennlp" / "lm_embeddings_0.hdf5", "r") as handle:
        assert handle  # the exact comparisons live in test_original_weights.py


def test_the_7_bit_x86_path_is_close_too(monkeypatch, allennlp_model_files, fixtures_dir):
    weights, options = allennlp_model_files
    monkeypatch.setattr(quantization, "cpu_has_vnni", lambda: False)
    bilm = load_bilm(weights, options=options, compute_dtype="int8")
    assert bilm.lstm.layers[0].reduce_range
    sentences = fixture_sentences(fixtures_dir)
    assert_close_per_layer(load_bilm(weights, options=options).embed_sentences(sentences), bilm.embed_sentences(sentences))


def test_int8_token_cache_and_stateful_calls_agree(float_and_int8, fixtures_dir):
    _, bilm = float_and_int8
    sentences = fixture_sentences(fixtures_dir)[:4]
    bilm.token_cache.clear()
    cold = bilm.embed_sentences(sentences)
    warm = bilm.embed_sentences(sentences)
    for a, b in zip(cold, warm):
        np.testing.assert_array_equal(a, b)
    bilm.reset_states()
    stateful = bilm.embed_batch(sentences, stateful=True)
    assert [a.shape for a in stateful] == [a.shape for a in cold]
    bilm.reset_states()


def test_an_int8_state_dict_is_the_dequantized_float_one_and_round_trips(allennlp_model_files, fixtures_dir):
    weights, options = allennlp_model_files
    float_bilm, int8_bilm = load_bilm(weights, options=options), load_bilm(weights, options=options, compute_dtype="int8")
    saved, original = int8_bilm.state_dict(), float_bilm.state_dict()
    assert sorted(saved) == sorted(original)
    for name, tensor in saved.items():
        assert tensor.dtype == torch.float32 and tensor.shape == original[name].shape, name
    reloaded = quantize_int8(bilm_from_bytes(bilm_to_bytes(int8_bilm)))
    assert all(torch.equal(saved[name], tensor) for name, tensor in reloaded.state_dict().items())
    sentences = fixture_sentences(fixtures_dir)[:4]
    # Activations are quantized per call, so both fresh models make the same calls (a token's
    # cached vector, and the state primed on <S> and </S>, come from the call that first saw it).
    for a, b in zip(int8_bilm.embed_sentences(sentences), reloaded.embed_sentences(sentences)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)  # quantizing int8 weights again changes nothing


def test_int8_vectors_depend_on_the_batch_only_within_the_int8_error(float_and_int8, fixtures_dir):
    float_bilm, bilm = float_and_int8
    sentences = fixture_sentences(fixtures_dir)
    bilm.token_cache.clear()
    together = bilm.embed_sentences(sentences)
    bilm.token_cache.clear()
    alone = [bilm.embed_sentences([s])[0] for s in sentences]
    assert_close_per_layer(together, alone)
    assert_close_per_layer(float_bilm.embed_sentences(sentences), alone)


def test_int8_runs_with_grad_enabled_and_gives_no_gradients(allennlp_model_files):
    weights, options = allennlp_model_files
    bilm = load_bilm(weights, options=options, compute_dtype="int8")
    assert not any(p.requires_grad for p in bilm.parameters())
    layers = bilm.layer_tensors([["grad", "is", "on"]])  # grad enabled: the int8 path still runs
    assert not layers[0].requires_grad
    with pytest.raises(Int8Unsupported):
        bilm.lstm.layers[0].reset_parameters()


# --- everywhere a compute dtype is accepted ---------------------------------------------------


def test_the_component_runs_int8_and_its_saved_config_records_it(allennlp_model_files, tmp_path):
    weights, options = allennlp_model_files
    block = {"bilm": str(weights), "options": str(options), "device": "cpu"}
    texts = ["The cat sat on the mat.", "Colorless green ideas sleep furiously."]
    docs = {}
    for dtype in ("float32", "int8"):
        nlp = spacy.blank("en")
        nlp.add_pipe("elmo", config={"model": {**block, "compute_dtype": dtype}})
        nlp.initialize()
        docs[dtype] = list(nlp.pipe(texts))
        assert is_int8(nlp.get_pipe("elmo").bilm) == (dtype == "int8")
    assert_close_per_layer([d._.elmo for d in docs["float32"]], [d._.elmo for d in docs["int8"]])
    nlp.to_disk(tmp_path / "pipeline")
    assert 'compute_dtype = "int8"' in (tmp_path / "pipeline" / "config.cfg").read_text()
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.config["components"]["elmo"]["model"]["compute_dtype"] == "int8"
    assert is_int8(loaded.get_pipe("elmo").bilm)
    for before, after in zip(docs["int8"], loaded.pipe(texts)):
        np.testing.assert_allclose(after._.elmo, before._.elmo, rtol=0, atol=1e-5)


def test_the_component_refuses_to_fine_tune_int8(allennlp_model_files):
    weights, options = allennlp_model_files
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"frozen": False, "model": {"bilm": str(weights), "options": str(options), "device": "cpu", "compute_dtype": "int8"}})
    with pytest.raises(ConfigError, match="int8 biLM has no gradients"):
        nlp.initialize()


def test_the_allennlp_modules_take_int8(allennlp_model_files, fixtures_dir):
    weights, options = allennlp_model_files
    sentences = fixture_sentences(fixtures_dir)[:4]
    expected = ElmoEmbedder(options, weights).embed_batch(sentences)
    embedder = ElmoEmbedder(options, weights, dtype="int8")
    assert is_int8(embedder.bilm)
    assert_close_per_layer(expected, embedder.embed_batch(sentences))
    elmo = Elmo(options, weights, 1, dropout=0.0, dtype="int8")
    mixed = elmo(batch_to_ids(sentences))["elmo_representations"][0]
    reference = Elmo(options, weights, 1, dropout=0.0)(batch_to_ids(sentences))["elmo_representations"][0]
    assert mixed.dtype == torch.float32
    cosine = torch.nn.functional.cosine_similarity(mixed.flatten(), reference.flatten(), dim=0)
    assert float(cosine.detach()) >= MIN_COSINE
    with pytest.raises(ConfigError, match="no gradients"):
        Elmo(options, weights, 1, requires_grad=True, dtype="int8")


def test_embed_dtype_int8_local(allennlp_model_files, tmp_path):
    weights, options = allennlp_model_files
    source = tmp_path / "input.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf8")
    args = ["--model", str(weights), "--options", str(options), "--tokenize", "whitespace", "--threads", "1", "--device", "cpu"]
    for dtype in ("float32", "int8"):
        result = CliRunner().invoke(app, ["embed", str(source), "-o", str(tmp_path / f"{dtype}.hdf5"), "--compute-dtype", dtype, *args])
        assert result.exit_code == 0, result.output
    with h5py.File(tmp_path / "float32.hdf5", "r") as f32, h5py.File(tmp_path / "int8.hdf5", "r") as i8:
        assert_close_per_layer([f32[str(i)][()] for i in range(3)], [i8[str(i)][()] for i in range(3)])
    refused = CliRunner().invoke(app, ["embed", str(source), "-o", str(tmp_path / "x.hdf5"), "--compute-dtype", "int8", "--device", "cuda", *args[:-2]])
    assert refused.exit_code == 1 and "error:" in refused.output


def test_embed_dtype_int8_with_ray(allennlp_model_files, tmp_path):
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    from spacy_elmo.ray_data import read_embeddings

    weights, options = allennlp_model_files
    source = tmp_path / "input.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf8")
    model = ["--model", str(weights), "--options", str(options), "--tokenize", "whitespace"]
    local = CliRunner().invoke(app, ["embed", str(source), "-o", str(tmp_path / "int8.hdf5"), "--compute-dtype", "int8", "--device", "cpu", *model])
    assert local.exit_code == 0, local.output
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        args = ["embed", str(source), "-o", str(tmp_path / "out"), "--engine", "ray", "--compute-dtype", "int8", "--device", "cpu"]
        result = CliRunner().invoke(app, args + model)
    finally:
        ray.shutdown()
    assert result.exit_code == 0, result.output
    rows = {line: array for _, line, _, array in read_embeddings(tmp_path / "out")}
    with h5py.File(tmp_path / "int8.hdf5", "r") as expected:
        for i in range(3):  # the same int8 model in the worker as in the local engine
            np.testing.assert_allclose(rows[i], expected[str(i)][()], rtol=0, atol=1e-5)


def test_a_float32_pipeline_loads_with_int8_features_by_a_config_override(allennlp_model_files, tmp_path):
    """What scripts/evaluate_int8.py does to score a model trained on float32 features with int8
    (pipelines trained with the v1 model block, whose compute dtype is `dtype`)."""
    weights, options = allennlp_model_files
    nlp = spacy.blank("en")
    v1 = {"@architectures": "spacy-elmo.ElmoModel.v1", "bilm": str(weights), "options": str(options), "device": "cpu"}
    nlp.add_pipe("elmo", config={"model": v1})
    nlp.initialize()
    nlp.to_disk(tmp_path / "pipeline")
    assert not is_int8(spacy.load(tmp_path / "pipeline").get_pipe("elmo").bilm)
    loaded = spacy.load(tmp_path / "pipeline", config={"components.elmo.model.dtype": "int8"})
    assert is_int8(loaded.get_pipe("elmo").bilm)
    assert loaded.config["components"]["elmo"]["model"]["dtype"] == "int8"
    assert_close_per_layer([nlp("The cat sat.")._.elmo], [loaded("The cat sat.")._.elmo])
