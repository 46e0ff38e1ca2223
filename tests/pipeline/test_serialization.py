"""Same results across save/load, bytes, doc serialization, batching and processes."""
import hashlib
import json
import pickle
import re
import shutil

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.util import load_model_from_config

from spacy_elmo.errors import SpacyElmoError

from ..processes import pipe_in_two_processes
from .helpers import elmo_nlp

TEXTS = ["The cat sat on the mat. It was happy.", "", "  ", "One", "Emoji 😀 and 中文. Done!", "A  spaced \n doc."]


@pytest.fixture(scope="module")
def movable_nlp(model_files, tmp_path_factory):
    """A pipeline whose weight files are deleted after it is built."""
    folder = tmp_path_factory.mktemp("weights")
    files = tuple(shutil.copy(f, folder / f.name) for f in model_files)
    nlp = elmo_nlp(files, config={"layer": "mix", "mix_weights": [0.5, 1.0, -1.0], "mix_gamma": 2.0, "set_vectors": True})
    shutil.rmtree(folder)
    return nlp


def layers(docs):
    return [doc._.elmo for doc in docs]


def assert_same(first, second):
    assert len(first) == len(second)
    for a, b in zip(first, second):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_to_disk_and_load_without_the_weight_files(movable_nlp, tmp_path):
    before = list(movable_nlp.pipe(TEXTS))
    movable_nlp.to_disk(tmp_path / "pipeline")
    model_file = (tmp_path / "pipeline" / "elmo" / "model").read_bytes()
    assert b"data.pkl" not in model_file  # no torch.save pickle inside
    loaded = spacy.load(tmp_path / "pipeline")
    after = list(loaded.pipe(TEXTS))
    assert_same(layers(before), layers(after))
    assert after[0][1]._.elmo.shape == (32,)
    np.testing.assert_allclose(after[0][1].vector, before[0][1].vector, rtol=1e-6, atol=1e-6)
    assert loaded.get_pipe("elmo").settings.layer == "mix"


def test_settings_come_from_the_config_at_load(movable_nlp, tmp_path):
    movable_nlp.to_disk(tmp_path / "pipeline")
    overrides = {"layer": "top", "mix_weights": None, "model": {"batch_size": 3}}
    loaded = spacy.load(tmp_path / "pipeline", config={"components": {"elmo": overrides}})
    doc = loaded("A cat sat.")
    elmo = loaded.get_pipe("elmo")
    assert elmo.settings.layer == "top" and elmo.model.attrs["settings"].batch_size == 3
    np.testing.assert_array_equal(doc[1]._.elmo, doc._.elmo[2, 1])


def test_to_bytes_and_from_bytes(movable_nlp):
    data = movable_nlp.to_bytes()
    restored = load_model_from_config(movable_nlp.config).from_bytes(data)
    assert_same(layers(movable_nlp.pipe(TEXTS)), layers(restored.pipe(TEXTS)))


def test_batch_equals_one_at_a_time(movable_nlp):
    assert_same(layers(movable_nlp.pipe(TEXTS, batch_size=64)), layers(movable_nlp(t) for t in TEXTS))


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_two_processes_equal_one(movable_nlp, tmp_path, warm):
    # torch in forked workers used to hang at its next parallel region.
    movable_nlp.to_disk(tmp_path / "pipeline")
    texts = TEXTS * 3
    assert_same(layers(movable_nlp.pipe(texts)), pipe_in_two_processes(tmp_path / "pipeline", texts, warm))


@pytest.mark.filterwarnings("ignore:.*W109")
def test_doc_attributes_round_trip(movable_nlp):
    docs = list(movable_nlp.pipe(TEXTS))
    expected = layers(docs)
    from_bytes = [Doc(movable_nlp.vocab).from_bytes(doc.to_bytes()) for doc in docs]
    doc_bin = DocBin(store_user_data=True, docs=docs)
    from_doc_bin = list(DocBin().from_bytes(doc_bin.to_bytes()).get_docs(movable_nlp.vocab))
    from_pickle = pickle.loads(pickle.dumps(docs))
    for restored in (from_bytes, from_doc_bin, from_pickle):
        assert_same(expected, layers(restored))
        for doc, original in zip(restored, docs):
            assert [t._.elmo.tolist() for t in doc] == [t._.elmo.tolist() for t in original]


@pytest.mark.parametrize("damage", ["flip", "truncate", "truncate-unchecked"])
def test_a_damaged_biLM_file_is_refused_in_one_line_naming_it(movable_nlp, tmp_path, damage):
    movable_nlp.to_disk(tmp_path / "pipeline")
    model = tmp_path / "pipeline" / "elmo" / "model"
    assert json.loads((model.parent / "checksums.json").read_text())["model"] == hashlib.sha256(model.read_bytes()).hexdigest()
    data = model.read_bytes()
    if damage == "flip":
        middle = len(data) // 2
        model.write_bytes(data[:middle] + bytes(b ^ 0xFF for b in data[middle : middle + 64]) + data[middle + 64 :])
    else:
        model.write_bytes(data[: len(data) // 2])
    if damage == "truncate-unchecked":  # a pipeline saved without checksums (before 0.4)
        (model.parent / "checksums.json").unlink()
    message = "cannot be read" if damage == "truncate-unchecked" else "its sha256 is not the one saved with it"
    with pytest.raises(SpacyElmoError, match=f"^{re.escape(str(model))}: {message}.*save the pipeline again$"):
        spacy.load(tmp_path / "pipeline")
