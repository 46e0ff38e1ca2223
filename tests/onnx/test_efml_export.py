"""ELMoForManyLangs biLMs (learned character and word vocabularies) export to ONNX: the graph
holds their embeddings, its metadata their vocabularies, and ONNX Runtime gives torch's layers."""
import dataclasses
import importlib
import sys

import numpy as np
import pytest
import spacy

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from typer.testing import CliRunner  # noqa: E402

from spacy_elmo import load_bilm  # noqa: E402
from spacy_elmo.bilm import save_bilm  # noqa: E402
from spacy_elmo.characters import CHARACTER_SPECIALS, LexiconMapper  # noqa: E402
from spacy_elmo.cli.app import app  # noqa: E402
from spacy_elmo.cli.main import main  # noqa: E402,F401  (registers the commands)
from spacy_elmo.onnx import OnnxBiLM, export_onnx, layer_cosines  # noqa: E402
from spacy_elmo.onnx.interface import LEXICON_INPUT_NAME, LEXICON_KEY  # noqa: E402
from spacy_elmo.onnx.runner import OnnxGraphError  # noqa: E402

from ..conftest import FIXTURES, TINY_CONFIG, random_bilm  # noqa: E402
from .pipelines import TEXTS, elmo_pipeline, layers  # noqa: E402

ATOL = 1e-5
EFML = FIXTURES / "efml"
# Padded when batched (lengths 6, 9, 0, 3, 1); characters and words outside the vocabularies
# ("🙂", "ÿ", "Q", "zebra"), a token cut to M - 2 characters, the markers as text.
SENTENCES = [
    ["今", "天", "天氣", "真", "好", "阿"],
    ["the", "cat", "sat", "🙂", "ÿ", "QQQ", "supercalifragilistic", "<bos>", "</S>"],
    [],
    ["a", "zebra", "dog"],
    ["好"],
]


@pytest.fixture(scope="module")
def efml():
    return load_bilm(EFML)


@pytest.fixture(scope="module")
def exported(efml, tmp_path_factory):
    return export_onnx(efml, tmp_path_factory.mktemp("efml") / "efml.onnx")


def assert_same_layers(expected, actual, atol=ATOL):
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual):
        assert a.shape == e.shape and a.dtype == np.float32
        np.testing.assert_allclose(a, e, atol=atol, rtol=0)


def check_runner(bilm, runner):
    """Torch's float32 layers: a padded batch (cold, then from the token cache), each sentence alone, batches of two."""
    expected = bilm.embed_sentences(SENTENCES)
    assert_same_layers(expected, runner.embed_batch(SENTENCES))
    assert_same_layers(expected, runner.embed_batch(SENTENCES))
    assert_same_layers(expected, [runner.embed_sentences([s])[0] for s in SENTENCES])
    assert_same_layers(expected, runner.embed_sentences(SENTENCES, batch_size=2))


def test_the_fixture_exports_with_its_embeddings_and_vocabularies(efml, exported):
    lexicon = efml.characters
    unknown = {c for s in SENTENCES for t in s for c in t} - set(lexicon.characters)
    assert {"🙂", "ÿ", "Q"} <= unknown and "zebra" not in lexicon.words  # the batch reads <oov>
    model = onnx.load(str(exported))
    onnx.checker.check_model(model, full_check=True)
    shapes = [[d.dim_param or d.dim_value for d in arg.type.tensor_type.shape.dim] for arg in model.graph.input]
    assert model.graph.input[0].name == LEXICON_INPUT_NAME
    assert shapes == [["n_new", 11], ["n_known", 8], ["batch", "n_tokens"], ["batch"]]  # M = 10, then the word id
    tables = [list(tensor.dims) for tensor in model.graph.initializer]
    assert [lexicon.n_characters, 5] in tables and [lexicon.n_words, 6] in tables  # the model's own tables
    metadata = {prop.key: prop.value for prop in model.metadata_props}
    assert metadata[LEXICON_KEY] == lexicon.mapper.to_json()
    runner = OnnxBiLM(exported, threads=1)
    assert isinstance(runner.characters, LexiconMapper)
    np.testing.assert_array_equal(runner.characters.encode(SENTENCES[1]), lexicon.encode(SENTENCES[1]))
    check_runner(efml, runner)


def test_a_converted_native_folder_and_int8_export(efml, tmp_path):
    converted = load_bilm(save_bilm(efml, tmp_path / "native"))
    check_runner(efml, OnnxBiLM(export_onnx(converted, tmp_path / "native.onnx", opset=13), threads=1))
    int8 = OnnxBiLM(export_onnx(efml, tmp_path / "int8.onnx", int8=True), threads=1)
    assert isinstance(int8.characters, LexiconMapper)
    cosines = layer_cosines(efml.embed_sentences(SENTENCES), int8.embed_sentences(SENTENCES))
    assert min(cosines) > 0.9, cosines


def test_a_lexicon_without_word_embedding(tmp_path):
    characters = {s: i for i, s in enumerate(CHARACTER_SPECIALS)}
    characters.update({c: len(CHARACTER_SPECIALS) + i for i, c in enumerate("abcdehot")})
    section = {"convention": "elmoformanylangs", "characters": characters, "n_characters": len(characters)}
    bilm = random_bilm(dataclasses.replace(TINY_CONFIG, max_characters_per_token=8, extra={"lexicon": section}))
    assert bilm.token_encoder.word_embedding is None
    path = export_onnx(bilm, tmp_path / "chars.onnx")
    assert [len(characters), 4] in [list(tensor.dims) for tensor in onnx.load(str(path)).graph.initializer]
    check_runner(bilm, OnnxBiLM(path, threads=1))


def test_the_runner_maps_tokens_without_torch(efml, exported):
    saved = dict(sys.modules)
    try:
        for name in [n for n in sys.modules if n.split(".")[0] in ("spacy_elmo", "torch")]:
            del sys.modules[name]
        sys.modules["torch"] = None  # type: ignore[assignment]  (import torch raises ImportError)
        runner = importlib.import_module("spacy_elmo.onnx.runner").OnnxBiLM(exported, threads=1)
        outputs = runner.embed_sentences(SENTENCES)
        assert sys.modules["torch"] is None and not any(n.startswith("torch.") for n in sys.modules)
    finally:
        for name in set(sys.modules) - set(saved):
            del sys.modules[name]
        sys.modules.update(saved)
    assert_same_layers(efml.embed_sentences(SENTENCES), outputs)


@pytest.mark.parametrize(
    "value,message",
    [
        (None, f"but its metadata lacks '{LEXICON_KEY}', the vocabularies; export the biLM again"),
        ("{", "is not the vocabularies export_onnx writes: not JSON"),
        ('{"characters": {"a": 0}, "words": {}}', "the characters lack the special entries <bos>, <eos>, <oov>"),
        ('{"characters": {"a": "0"}, "words": {}}', "'characters' must be an object of non-negative integer ids"),
    ],
    ids=["missing", "not-json", "no-specials", "not-ids"],
)
def test_a_graph_without_its_vocabularies_is_one_line(exported, value, message):
    model = onnx.load(str(exported))
    kept = [prop for prop in model.metadata_props if prop.key != LEXICON_KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    if value is not None:
        model.metadata_props.add(key=LEXICON_KEY, value=value)
    with pytest.raises(OnnxGraphError) as err:
        OnnxBiLM(model.SerializeToString(), threads=1)
    assert "\n" not in str(err.value) and message in str(err.value), str(err.value)


def test_the_command_line_and_the_pipeline(efml, tmp_path):
    result = CliRunner().invoke(app, ["export-onnx", str(EFML), str(tmp_path / "cli.onnx")])
    assert result.exit_code == 0, result.output
    assert "(float32, opset 17; 3 layers of 16)" in result.output
    texts = [t for t in TEXTS if t.strip()]
    torch_nlp, onnx_nlp = elmo_pipeline(EFML, "torch"), elmo_pipeline(EFML)
    assert isinstance(onnx_nlp.get_pipe("elmo").bilm, OnnxBiLM)
    assert_same_layers(layers(torch_nlp, texts), layers(onnx_nlp, texts))
    onnx_nlp.to_disk(tmp_path / "pipeline")
    assert_same_layers(layers(torch_nlp, texts), layers(spacy.load(tmp_path / "pipeline"), texts))
