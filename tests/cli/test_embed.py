"""`python -m spacy_elmo embed` (local engine): AllenNLP's hdf5 layout, one dataset of all layers per line."""
import json

import h5py
import numpy as np
import pytest
import spacy
from typer.testing import CliRunner

from spacy_elmo.bilm import load_bilm
from spacy_elmo.cli.app import app
from spacy_elmo.cli.main import main  # noqa: F401  (registers the commands)

LINES = ["The cat sat .", "A second line , with more words .", "The cat sat ."]


def embed(source, output, files, *extra):
    weights, options = files
    return CliRunner().invoke(app, ["embed", str(source), "-o", str(output), "--model", str(weights), "--options", str(options), *extra])


def test_embed_writes_all_layers_per_line_in_allennlps_layout(allennlp_model_files, tmp_path):
    weights, options = allennlp_model_files
    source = tmp_path / "input.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf8")
    result = embed(source, tmp_path / "out.hdf5", allennlp_model_files, "--tokenize", "whitespace", "--threads", "1")
    assert result.exit_code == 0, result.output
    assert "embedded 3 rows (16 tokens)" in result.output
    expected = load_bilm(weights, options=options).embed_sentences([line.split() for line in LINES])
    with h5py.File(tmp_path / "out.hdf5", "r") as handle:
        assert sorted(handle.keys()) == ["0", "1", "2", "sentence_to_index"]
        for i, array in enumerate(expected):
            assert handle[str(i)].shape == (3, len(LINES[i].split()), 32) and handle[str(i)].dtype == np.float32
            np.testing.assert_allclose(handle[str(i)][()], array, rtol=1e-6, atol=1e-6)
        index = json.loads(handle["sentence_to_index"][0])
    # AllenNLP's: a repeated line maps to its last index, as a string.
    assert index == {"The cat sat .": "2", "A second line , with more words .": "1"}


def test_embed_reads_sentences_with_the_sentencizer(allennlp_model_files, tmp_path):
    weights, options = allennlp_model_files
    source = tmp_path / "input.txt"
    source.write_text("The cat sat. It was happy.\n", encoding="utf8")
    result = embed(source, tmp_path / "out.hdf5", allennlp_model_files, "--sentences")
    assert result.exit_code == 0, result.output
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    sentences = [[token.text for token in sentence] for sentence in nlp("The cat sat. It was happy.").sents]
    assert len(sentences) == 2
    expected = np.concatenate(load_bilm(weights, options=options).embed_sentences(sentences), axis=1)
    with h5py.File(tmp_path / "out.hdf5", "r") as handle:
        np.testing.assert_allclose(handle["0"][()], expected, rtol=1e-5, atol=1e-6)


def test_embed_fails_clearly_on_missing_weights(allennlp_model_files, tmp_path):
    _, options = allennlp_model_files
    source = tmp_path / "input.txt"
    source.write_text("a b\n", encoding="utf8")
    args = ["embed", str(source), "-o", str(tmp_path / "o.hdf5"), "--model", str(tmp_path / "nope.hdf5"), "--options", str(options)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1 and "nope.hdf5" in result.output
    assert "component" not in result.output


def test_embed_tokenizes_with_spacy_by_default(allennlp_model_files, tmp_path):
    source = tmp_path / "input.txt"
    source.write_text("We don't know.\n", encoding="utf8")
    result = embed(source, tmp_path / "out.hdf5", allennlp_model_files)
    assert result.exit_code == 0, result.output
    with h5py.File(tmp_path / "out.hdf5", "r") as handle:
        assert handle["0"].shape == (3, 5, 32)  # We do n't know .


@pytest.mark.parametrize(
    "content,message",
    [
        (b"", "empty.txt is empty"),
        (b"fine line\n\x89PNG\xff\xfe\n", "empty.txt:2: not UTF-8"),
        (b"a line\n  \nanother\n", "empty.txt:2: empty line"),
    ],
)
def test_embed_names_bad_inputs(allennlp_model_files, tmp_path, content, message):
    source = tmp_path / "empty.txt"
    source.write_bytes(content)
    result = embed(source, tmp_path / "o.hdf5", allennlp_model_files)
    assert result.exit_code == 1 and message in result.output


@pytest.mark.parametrize(
    "extra,message",
    [
        (["-o", "no/such/o.hdf5"], "output file does not exist"),
        (["--engine", "spark"], "unknown --engine"),
        (["--format", "parquet"], "writes hdf5"),
        (["--engine", "ray", "--threads", "2"], "--cpus-per-worker"),
    ],
)
def test_embed_refuses_what_the_engine_cannot_do(allennlp_model_files, tmp_path, monkeypatch, extra, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "input.txt").write_text("a b\n")
    result = embed(tmp_path / "input.txt", tmp_path / "o.hdf5", allennlp_model_files, *extra)
    assert result.exit_code == 1 and message in result.output


def test_embed_refuses_to_overwrite_an_hdf5_file_unless_told(allennlp_model_files, tmp_path):
    source = tmp_path / "input.txt"
    source.write_text("a b\n", encoding="utf8")
    (tmp_path / "out.hdf5").write_bytes(b"kept")
    result = embed(source, tmp_path / "out.hdf5", allennlp_model_files)
    assert result.exit_code == 1 and result.output.strip() == f"error: {tmp_path / 'out.hdf5'} already exists; name a new file, or pass --overwrite"
    assert (tmp_path / "out.hdf5").read_bytes() == b"kept"
    result = embed(source, tmp_path / "out.hdf5", allennlp_model_files, "--overwrite")
    assert result.exit_code == 0, result.output
    with h5py.File(tmp_path / "out.hdf5", "r") as handle:
        assert handle["0"].shape == (3, 2, 32)


def test_an_unknown_language_is_one_line_naming_it(allennlp_model_files, tmp_path):
    source = tmp_path / "input.txt"
    source.write_text("a b\n", encoding="utf8")
    result = embed(source, tmp_path / "out.hdf5", allennlp_model_files, "--lang", "english")
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1, result.output
    assert result.output.startswith("error: spaCy has no language 'english'; use a language code such as en")
    assert not (tmp_path / "out.hdf5").exists()


def test_the_local_engine_writes_one_layer_as_allennlps_top(allennlp_model_files, tmp_path):
    weights, options = allennlp_model_files
    source = tmp_path / "input.txt"
    source.write_text("The cat sat .\n", encoding="utf8")
    result = embed(source, tmp_path / "top.hdf5", allennlp_model_files, "--tokenize", "whitespace", "--layer", "top")
    assert result.exit_code == 0, result.output
    expected = load_bilm(weights, options=options).embed_sentences([LINES[0].split()])[0][-1]
    with h5py.File(tmp_path / "top.hdf5", "r") as handle:
        np.testing.assert_allclose(handle["0"][()], expected, rtol=1e-6, atol=1e-6)


def test_ctrl_c_is_one_line(allennlp_model_files, tmp_path, monkeypatch):
    source = tmp_path / "input.txt"
    source.write_text("a b\n", encoding="utf8")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("spacy_elmo.embed.local.embed_file", interrupted)
    result = embed(source, tmp_path / "out.hdf5", allennlp_model_files)
    assert result.exit_code == 130
    assert result.output.strip() == f"interrupted: nothing written to {tmp_path / 'out.hdf5'}"
