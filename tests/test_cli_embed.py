"""`python -m spacy_elmo embed`: one hdf5 dataset of all layers per input line."""
import json

import h5py
import numpy as np
from typer.testing import CliRunner

from spacy_elmo.bilm import load_bilm
from spacy_elmo.cli.app import app
from spacy_elmo.cli.main import main  # noqa: F401  (registers the commands)

LINES = ["The cat sat .", "", "A second line , with more words .", "The cat sat ."]


def test_embed_writes_all_layers_per_line(allennlp_model_files, tmp_path):
    weights, options = allennlp_model_files
    source = tmp_path / "input.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf8")
    output = tmp_path / "out.hdf5"
    args = ["embed", str(source), "--output", str(output), "--model", str(weights), "--options", str(options), "--tokenize", "whitespace"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    expected = load_bilm(weights, options=options).embed_sentences([line.split() for line in LINES])
    with h5py.File(output, "r") as handle:
        assert sorted(handle.keys()) == ["0", "1", "2", "3", "sentence_to_index"]
        for i, array in enumerate(expected):
            assert handle[str(i)].shape == (3, len(LINES[i].split()), 32)
            np.testing.assert_allclose(handle[str(i)][()], array, rtol=1e-6, atol=1e-6)
        index = json.loads(handle["sentence_to_index"][0])
    assert index == {"The cat sat .": 0, "": 1, "A second line , with more words .": 2}


def test_embed_fails_clearly_on_missing_weights(allennlp_model_files, tmp_path):
    _, options = allennlp_model_files
    source = tmp_path / "input.txt"
    source.write_text("a b\n", encoding="utf8")
    args = ["embed", str(source), "-o", str(tmp_path / "o.hdf5"), "--model", str(tmp_path / "nope.hdf5"), "--options", str(options)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1 and "nope.hdf5" in result.output


def embed(source, output, files, *extra):
    weights, options = files
    return CliRunner().invoke(app, ["embed", str(source), "-o", str(output), "--model", str(weights), "--options", str(options), *extra])


def test_embed_tokenizes_with_spacy_by_default(allennlp_model_files, tmp_path):
    source = tmp_path / "input.txt"
    source.write_text("We don't know.\n", encoding="utf8")
    result = embed(source, tmp_path / "out.hdf5", allennlp_model_files)
    assert result.exit_code == 0, result.output
    with h5py.File(tmp_path / "out.hdf5", "r") as handle:
        assert handle["0"].shape == (3, 5, 32)  # We do n't know .


def test_embed_names_bad_inputs_and_outputs(allennlp_model_files, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    result = embed(empty, tmp_path / "o.hdf5", allennlp_model_files)
    assert result.exit_code == 1 and "empty.txt is empty" in result.output
    binary = tmp_path / "data.bin"
    binary.write_bytes(b"fine line\n\x89PNG\xff\xfe\n")
    result = embed(binary, tmp_path / "o.hdf5", allennlp_model_files)
    assert result.exit_code == 1 and "data.bin:2: not UTF-8" in result.output
    source = tmp_path / "input.txt"
    source.write_text("a b\n")
    result = embed(source, tmp_path / "no" / "such" / "o.hdf5", allennlp_model_files)
    assert result.exit_code == 1 and "output file does not exist" in result.output
