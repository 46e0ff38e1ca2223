"""A pipeline on a bundled biLM saves its name and hash, not its weights; clear errors where the
installation lacks that biLM or ships other weights under its name."""
from pathlib import Path

import numpy
import pytest
import spacy
import torch

from spacy_elmo.bilm import load_bilm, save_bilm
from spacy_elmo.layers import bundled_reference
from spacy_elmo.layers.bundled_reference import BundledReferenceError, sha256
from spacy_elmo.pipeline.integrity import write_checksums

from ..conftest import random_bilm

TEXT = "We saw a play."


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": "en_base"}})
    nlp.initialize()
    path = tmp_path_factory.mktemp("pipeline") / "nlp"
    nlp.to_disk(path)
    numpy.save(path.parent / "vectors.npy", nlp(TEXT)._.elmo)
    return path


def test_saves_a_reference_that_loads_the_same_vectors(saved: Path):
    data = (saved / "elmo" / "model").read_bytes()
    assert len(data) < 2000 and bundled_reference.MAGIC in data
    assert sha256(bundled_reference.bundled_folder("en_base") / "model.safetensors").encode() in data
    loaded = spacy.load(saved)
    numpy.testing.assert_array_equal(loaded(TEXT)._.elmo, numpy.load(saved.parent / "vectors.npy"))


def test_changed_weights_are_saved_whole(tmp_path: Path):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": "en_base"}})
    nlp.initialize()
    with torch.no_grad():
        next(nlp.get_pipe("elmo").bilm.parameters()).add_(1.0)
    nlp.to_disk(tmp_path / "nlp")
    assert (tmp_path / "nlp" / "elmo" / "model").stat().st_size > 1_000_000


def test_missing_bundled_model_is_one_clear_error(saved: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setattr("spacy_elmo.bilm.loading.BUNDLED_DIR", tmp_path)
    with pytest.raises(BundledReferenceError, match=r"needs the bundled biLM 'en_base', which spacy-elmo \S+ does not ship.*written by spacy-elmo"):
        spacy.load(saved)


def test_other_weights_under_the_name_are_refused(saved: Path, tmp_path: Path):
    copy = tmp_path / "nlp"
    spacy.load(saved).to_disk(copy)
    model = copy / "elmo" / "model"
    real = sha256(bundled_reference.bundled_folder("en_base") / "model.safetensors")
    model.write_bytes(model.read_bytes().replace(real.encode(), ("0" * 64).encode()))
    write_checksums(model.parent)  # an intact file, naming other weights
    with pytest.raises(BundledReferenceError, match="has other weights than the one the pipeline was trained with"):
        spacy.load(copy)


def test_bundled_folder_names_only_a_bundled_model(tmp_path: Path):
    assert bundled_reference.bundled_folder(None).name == "en_base_v2"  # the default
    assert bundled_reference.bundled_folder("en_base").name == "en_base"
    assert bundled_reference.bundled_folder(str(save_bilm(random_bilm(), tmp_path / "mine"))) is None
    assert bundled_reference.bundled_folder(str(tmp_path / "missing")) is None


def test_a_marked_biLM_saves_its_name_and_hash_until_its_weights_change():
    folder = bundled_reference.bundled_folder("en_base")
    bilm = load_bilm(folder, device="cpu")
    assert bundled_reference.reference_bytes(bilm) is None  # not marked
    bundled_reference.mark(bilm, folder)
    data = bundled_reference.reference_bytes(bilm)
    assert bundled_reference.is_reference(data) and not bundled_reference.is_reference(b"\x08\x00" + data)
    assert bundled_reference.resolve_reference(data) == folder
    with torch.no_grad():
        next(bilm.parameters()).add_(1.0)
    assert bundled_reference.reference_bytes(bilm) is None


@pytest.mark.parametrize("body", [b"not json", b'{"name": "en_base"}', b'["en_base"]'])
def test_an_unreadable_reference_is_one_clear_error(body: bytes):
    with pytest.raises(BundledReferenceError, match="^the pipeline's elmo model names a bundled biLM in an unreadable form; save it again$"):
        bundled_reference.resolve_reference(bundled_reference.MAGIC + body)
