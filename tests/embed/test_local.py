"""The local engine (`embed_file`): what it returns and writes, `overwrite`, its refusals before
anything is written, lines read as stripped UTF-8 and embedded a chunk at a time.

(The command line over it is tested in tests/cli/test_embed.py.)"""
import json
from pathlib import Path

import numpy as np
import pytest

from spacy_elmo.bilm import save_bilm
from spacy_elmo.embed.local import embed_file, embedded_lines, read_lines
from spacy_elmo.embed.settings import EmbedSettings
from spacy_elmo.layers.model_settings import ElmoModelSettings

from ..conftest import random_bilm

h5py = pytest.importorskip("h5py")


@pytest.fixture(scope="module")
def bilm():
    return random_bilm()


@pytest.fixture(scope="module")
def settings(tmp_path_factory, bilm) -> EmbedSettings:
    folder = save_bilm(bilm, tmp_path_factory.mktemp("bilm") / "tiny")
    return EmbedSettings(model=ElmoModelSettings(bilm=str(folder), device="cpu", batch_size=2), tokenize="whitespace")


def test_embed_file_writes_each_line_and_counts_rows_and_tokens(tmp_path: Path, settings, bilm):
    source = tmp_path / "in.txt"
    source.write_text("  a b c \nd\ne f\n", encoding="utf8")
    result = embed_file(source, tmp_path / "out.hdf5", settings, threads=1)
    assert (result["rows"], result["tokens"], result["problems"]) == (3, 6, []) and result["seconds"] > 0
    expected = bilm.embed_sentences([["a", "b", "c"], ["d"], ["e", "f"]])
    with h5py.File(tmp_path / "out.hdf5", "r") as written:
        assert json.loads(written["sentence_to_index"][0]) == {"a b c": "0", "d": "1", "e f": "2"}
        for i, layers in enumerate(expected):
            np.testing.assert_allclose(written[str(i)][()], layers, rtol=1e-5, atol=1e-6)


def test_one_layer_counts_its_tokens_too_and_overwrite_replaces_the_file(tmp_path: Path, settings):
    source, output = tmp_path / "in.txt", tmp_path / "out.hdf5"
    source.write_text("a b c\nd\n", encoding="utf8")
    output.write_bytes(b"old")
    with pytest.raises(ValueError, match=f"^{output} already exists; name a new file, or pass --overwrite$"):
        embed_file(source, output, settings, threads=1)
    assert output.read_bytes() == b"old"
    one_layer = EmbedSettings(model=settings.model, tokenize="whitespace", layer="top")
    result = embed_file(source, output, one_layer, threads=1, overwrite=True)
    assert (result["rows"], result["tokens"]) == (2, 4)
    with h5py.File(output, "r") as written:
        assert written["0"].shape == (3, 16)


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda tmp: (tmp / "missing.txt", tmp / "o.hdf5"), "input file not found: {tmp}/missing.txt"),
        (lambda tmp: (tmp / "in.txt", tmp / "no" / "o.hdf5"), "the folder of the output file does not exist: {tmp}/no"),
        (lambda tmp: (tmp / "empty.txt", tmp / "o.hdf5"), "{tmp}/empty.txt is empty: nothing to embed"),
        (lambda tmp: (tmp / "blank.txt", tmp / "o.hdf5"), "{tmp}/blank.txt:2: empty line"),
    ],
)
def test_refusals_name_the_problem_and_write_nothing(tmp_path: Path, settings, make, message):
    (tmp_path / "in.txt").write_text("a\n")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "blank.txt").write_text("a\n \n")
    source, output = make(tmp_path)
    with pytest.raises(ValueError, match="^" + message.format(tmp=tmp_path)):
        embed_file(source, output, settings, threads=1)
    assert not output.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["blank.txt", "empty.txt", "in.txt"]


def test_read_lines_strips_and_names_the_line_that_is_not_utf8(tmp_path: Path):
    path = tmp_path / "t.txt"
    path.write_bytes("  é x \r\n\ny\n".encode("utf8"))
    assert read_lines(path) == ["é x", "", "y"]
    path.write_bytes(b"fine\nalso fine\n\xff broken\n")
    with pytest.raises(ValueError, match=rf"^{path}:3: not UTF-8 text \(invalid start byte at byte 0\); embed reads UTF-8 text files$"):
        read_lines(path)


def test_embedded_lines_asks_for_a_chunk_at_a_time_and_keeps_the_order():
    asked = []

    def embedder(lines):
        asked.append(list(lines))
        return [(line.split(), np.full((1, 1), float(len(line)))) for line in lines]

    pairs = list(embedded_lines(embedder, ["a", "bb", "ccc", "dddd", "e"], 2))
    assert asked == [["a", "bb"], ["ccc", "dddd"], ["e"]]
    assert [(line, float(v[0, 0])) for line, v in pairs] == [("a", 1.0), ("bb", 2.0), ("ccc", 3.0), ("dddd", 4.0), ("e", 1.0)]
