"""The ONNX graph gives the torch biLM's stateless layers, for any batch size and length."""
import dataclasses

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import torch  # noqa: E402

from spacy_elmo import load_bilm  # noqa: E402
from spacy_elmo.bilm.quantization import quantize_int8  # noqa: E402
from spacy_elmo.errors import SpacyElmoError  # noqa: E402
from spacy_elmo.onnx import OnnxBiLM, export_onnx  # noqa: E402

from ..conftest import TINY_CONFIG, random_bilm  # noqa: E402

ATOL = 1e-5
SENTENCES = [
    ["The", "cat", "sat", "on", "the", "mat", "."],
    ["Play"],
    [],
    ["naïve", "東京", "🙂", "x" * 80, "\x00"],
    "We went to see a play at the theatre last night , and it was far too long for us .".split(),
]


def assert_same_layers(expected, actual):
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual):
        assert a.shape == e.shape and a.dtype == np.float32
        np.testing.assert_allclose(a, e, atol=ATOL, rtol=0)


def check_exported(bilm, path):
    """Padded batches, each sentence alone, and the torch float32 layers all agree."""
    runner = OnnxBiLM(export_onnx(bilm, path), threads=1)
    expected = bilm.embed_sentences(SENTENCES)
    assert_same_layers(expected, runner.embed_sentences(SENTENCES))
    assert_same_layers(expected, [runner.embed_sentences([s])[0] for s in SENTENCES])
    assert_same_layers(expected, runner.embed_sentences(SENTENCES, batch_size=2))
    return runner


@pytest.mark.parametrize(
    "config",
    [
        TINY_CONFIG,
        dataclasses.replace(
            TINY_CONFIG, projection_dim=24, cell_clip=None, proj_clip=None, use_skip_connections=False, activation="tanh"
        ),
    ],
    ids=["tiny", "no-projection-or-clipping"],
)
def test_tiny_biLM(tmp_path, config):
    check_exported(random_bilm(config), tmp_path / "tiny.onnx")


def test_reference_fixtures_model(tmp_path, allennlp_model_files):
    weights, options = allennlp_model_files
    check_exported(load_bilm(weights, options=options), tmp_path / "fixtures.onnx")


def test_bundled_en_base_v2(tmp_path):
    runner = check_exported(load_bilm("en_base_v2"), tmp_path / "en_base_v2.onnx")
    assert (runner.n_layers, runner.output_dim) == (3, 256)


def test_interface_and_shapes_are_dynamic(tmp_path):
    bilm = random_bilm()
    path = export_onnx(bilm, tmp_path / "tiny.onnx")  # traced on two sentences of 3 and 1 tokens
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    shapes = [[d.dim_param or d.dim_value for d in arg.type.tensor_type.shape.dim] for arg in model.graph.input]
    assert shapes == [["n_new", 20], ["n_known", 8], ["batch", "n_tokens"], ["batch"]]
    shapes = [[d.dim_param or d.dim_value for d in arg.type.tensor_type.shape.dim] for arg in model.graph.output]
    assert shapes == [[3, "batch", "n_tokens", 16], ["n_new", 8]]
    runner = OnnxBiLM(path, threads=1)
    sentences = [[f"w{i}{j}" for j in range(n)] for i, n in enumerate((17, 1, 9, 0, 40))]
    char_ids = runner.characters.encode_batch(sentences)
    reference, lengths = bilm.char_id_layers(torch.from_numpy(char_ids))
    reference = reference.detach().numpy().transpose(1, 0, 2, 3)
    # Cold (every token encoded), then warm (every token but one from the cache), then a batch
    # mixing cached and new tokens: the same layers each time.
    for batch in (sentences, sentences):
        outputs = runner.embed_batch(batch)
        for row, n in enumerate(lengths.tolist()):
            np.testing.assert_allclose(outputs[row], reference[:, row, 1 : n + 1], atol=ATOL, rtol=0)
    assert len(runner._cache) == 67
    mixed = [["w00", "new", "w01"], ["w42", "w42", "other", "w00"]]
    assert_same_layers(bilm.embed_sentences(mixed), runner.embed_batch(mixed))
    uncached = OnnxBiLM(path, threads=1, cache_bytes=0)
    assert_same_layers(bilm.embed_sentences(mixed), uncached.embed_batch(mixed))
    assert len(uncached._cache) == 0
    small = OnnxBiLM(path, threads=1, cache_bytes=3 * 8 * 4)  # room for 3 embeddings of 8 floats
    # Distinct tokens in order of appearance: w00 new w01 w42 other; the least recently used go.
    for cached in (["w01", "w42", "other"], ["other", "w00", "new"]):
        assert_same_layers(bilm.embed_sentences(mixed), small.embed_batch(mixed))
        assert list(small._cache) == cached
    small.clear_cache()
    assert len(small._cache) == 0


def test_padding_is_zero(tmp_path):
    runner = OnnxBiLM(export_onnx(random_bilm(), tmp_path / "tiny.onnx"), threads=1)
    inputs = {
        "char_ids": runner.characters.encode(["a", "b"]),
        "known": np.zeros((0, 8), dtype=np.float32),
        "token_index": np.array([[0, 1, 0], [1, 1, 1]], dtype=np.int64),
        "lengths": np.array([2, 3], dtype=np.int64),
    }
    layers, embeddings = runner.session.run(None, inputs)
    assert layers.shape == (3, 2, 3, 16) and embeddings.shape == (2, 8)
    assert not layers[:, 0, 2:].any() and layers[:, 1].all()


def test_one_run_takes_its_rows_in_any_order_of_length(tmp_path):
    bilm = random_bilm()
    runner = OnnxBiLM(export_onnx(bilm, tmp_path / "tiny.onnx"), threads=1)
    words = "the cat sat on a mat and we went to see it".split()
    shuffled = [words[:2], words[:7], [], words[3:10], words[:1], words[2:9], words, words[5:7]]
    for batch in (shuffled, [words[:5]], [["x"]]):  # short rows first, equal lengths, empty; one row; one token
        assert_same_layers(bilm.embed_sentences(batch), runner.embed_batch(batch))


@pytest.mark.parametrize("int8", [False, True], ids=["float32", "int8"])
def test_steps_past_the_longest_row_give_padding(tmp_path, int8):
    bilm = random_bilm()
    runner = OnnxBiLM(export_onnx(bilm, tmp_path / "tiny.onnx", int8=int8), threads=1)
    inputs = {
        "char_ids": runner.characters.encode(["a", "b"]),
        "known": np.zeros((0, 8), dtype=np.float32),
        "token_index": np.array([[0, 1, 0, 0], [1, 0, 0, 0]], dtype=np.int64),
        "lengths": np.array([1, 2], dtype=np.int64),
    }
    layers, _ = runner.session.run(None, inputs)
    expected = bilm.embed_sentences([["a"], ["b", "a"]])
    for row, want in enumerate(expected):
        length = want.shape[1]
        if not int8:
            np.testing.assert_allclose(layers[:, row, :length], want, atol=ATOL, rtol=0)
        assert layers[:, row, :length].all() and not layers[:, row, length:].any()
    layers, _ = runner.session.run(None, {**inputs, "lengths": np.zeros(2, dtype=np.int64)})
    assert layers.shape == (3, 2, 4, 16) and not layers.any()


@pytest.mark.parametrize("opset", [13, 20])
def test_other_opsets(tmp_path, opset):
    bilm = random_bilm()
    runner = OnnxBiLM(export_onnx(bilm, tmp_path / "tiny.onnx", opset=opset), threads=1)
    assert_same_layers(bilm.embed_sentences(SENTENCES), runner.embed_sentences(SENTENCES))


def test_refusals(tmp_path):
    with pytest.raises(SpacyElmoError, match="quantized to int8"):
        export_onnx(quantize_int8(random_bilm()), tmp_path / "int8.onnx")
    with pytest.raises(SpacyElmoError, match="float32 biLM on the CPU"):
        export_onnx(random_bilm().to(torch.bfloat16), tmp_path / "bf16.onnx")
    with pytest.raises(SpacyElmoError, match="opset 12 is not supported"):
        export_onnx(random_bilm(), tmp_path / "old.onnx", opset=12)
    assert not list(tmp_path.iterdir())

