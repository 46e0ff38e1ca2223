"""The English biLMs shipped inside the package (the default en_base_v2, and en_base): they load
offline, give finite contextual vectors and keep their measured held-out perplexity; en_base gives
the vectors it gave before the default changed."""
import gzip
import itertools
import json
import os
from pathlib import Path

import numpy
import pytest
import spacy
import torch

import spacy_elmo
from spacy_elmo.bilm.loading import BUNDLED_DIR, DEFAULT_MODEL, bundled_models
from spacy_elmo.training.corpus import make_tokenizer
from spacy_elmo.training.evaluation import evaluate_perplexity

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
HELDOUT_LINES = 500
# Forward and backward perplexity on the first 500 lines of the held-out corpus, as measured
# when each model was packaged, plus a margin for numerical differences across machines:
# en_base forward 100.56, backward 100.58; en_base_v2 forward 67.10, backward 67.42.
PERPLEXITY_BOUND = {"en_base": 106.0, "en_base_v2": 71.0}


@pytest.fixture(scope="module")
def bilm():
    return spacy_elmo.load_bilm()


def test_default_is_the_bundled_english_model(bilm):
    assert DEFAULT_MODEL == "en_base_v2" and bundled_models() == ["en_base", "en_base_v2"]
    by_name = spacy_elmo.load_bilm("en_base_v2")
    for ours, theirs in zip(bilm.state_dict().values(), by_name.state_dict().values()):
        assert ours.dtype == theirs.dtype and bool((ours == theirs).all())


@pytest.mark.parametrize("name", ["en_base", "en_base_v2"])
def test_shipped_weights_are_small_and_compute_in_float32(name):
    folder = BUNDLED_DIR / name
    assert sum(f.stat().st_size for f in folder.iterdir()) <= 25_000_000
    assert json.loads((folder / "config.json").read_text())["storage_dtype"] == "float16"
    assert json.loads((folder / "pretrain.json").read_text())["name"] == name
    bilm = spacy_elmo.load_bilm(name)
    assert all(p.dtype == torch.float32 for p in bilm.parameters())
    assert bilm.vocab is not None and bilm.vocab[:3] == ["<S>", "</S>", "<UNK>"]


def test_en_base_gives_the_vectors_it_gave_before_the_default_changed():
    """tests/fixtures/en_base_vectors.npz: en_base's `embed_sentences` of these two sentences,
    written (one thread) before en_base_v2 became the default."""
    before = numpy.load(FIXTURES / "en_base_vectors.npz")
    theatre, game = spacy_elmo.load_bilm("en_base").embed_sentences(
        [["We", "saw", "a", "play", "."], ["Let", "us", "play", "chess", "tonight", "."]]
    )
    numpy.testing.assert_allclose(theatre, before["play_theatre"], atol=1e-5, rtol=0)
    numpy.testing.assert_allclose(game, before["play_game"], atol=1e-5, rtol=0)
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": "en_base"}})
    nlp.initialize()
    doc = nlp.make_doc("We saw a play .")
    numpy.testing.assert_allclose(nlp(doc)[3]._.elmo, before["play_theatre"][:, 3].mean(axis=0), atol=1e-5, rtol=0)


def test_vectors_are_finite_and_contextual(bilm):
    (game, theatre) = bilm.embed_sentences([["Let", "us", "play", "chess", "."], ["The", "play", "was", "long", "."]])
    assert game.shape == (3, 5, 256) and numpy.isfinite(game).all() and numpy.isfinite(theatre).all()
    # The token layer is context-free; the LSTM layers are not.
    assert numpy.allclose(game[0, 2], theatre[0, 1], atol=1e-5)
    assert not numpy.allclose(game[1:, 2], theatre[1:, 1], atol=1e-2)


def test_elmo_component_defaults_to_the_bundled_model():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    doc = nlp("The play was long.")
    assert doc[1]._.elmo.shape == (256,) and numpy.isfinite(doc[1]._.elmo).all()


def heldout_path() -> Path:
    env = os.environ.get("SPACY_ELMO_DATA")
    return (Path(env) if env else REPO.parent / "shared" / "data") / "corpus" / "heldout.txt.gz"


@pytest.mark.parametrize("name", ["en_base", "en_base_v2"])
def test_heldout_perplexity_below_bound(name):
    path = heldout_path()
    if not path.is_file():
        pytest.skip(f"held-out corpus not found at {path}; set SPACY_ELMO_DATA")
    tokenize = make_tokenizer("en")
    with gzip.open(path, "rt", encoding="utf8") as lines:
        sentences = [tokenize(line) for line in itertools.islice(lines, HELDOUT_LINES)]
    result = evaluate_perplexity(spacy_elmo.load_bilm(name), sentences, batch_size=64, unroll_steps=20)
    assert result.n_tokens > 5000
    assert result.forward < PERPLEXITY_BOUND[name] and result.backward < PERPLEXITY_BOUND[name]


def test_saved_pipeline_holds_no_softmax_and_carries_the_model_licence(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    nlp.initialize()
    assert nlp.get_pipe("elmo").bilm.softmax is None
    nlp.to_disk(tmp_path / "pipeline")
    weights = (tmp_path / "pipeline" / "elmo" / "model").stat().st_size
    shipped = sum(f.stat().st_size for f in (BUNDLED_DIR / DEFAULT_MODEL).iterdir())
    assert weights < shipped
    meta = json.loads((tmp_path / "pipeline" / "meta.json").read_text())
    assert {"name": f"spacy-elmo biLM {DEFAULT_MODEL}", "license": "CC BY-SA 4.0"} in meta["sources"]
    kept = spacy.blank("en")
    kept.add_pipe("elmo", config={"model": {"keep_softmax": True}})
    kept.initialize()
    assert kept.get_pipe("elmo").bilm.softmax is not None


def test_a_pipeline_in_another_language_is_warned_about_the_english_model():
    nlp = spacy.blank("de")
    nlp.add_pipe("elmo")
    with pytest.warns(UserWarning, match="language is 'de'.*trained on 'en'"):
        nlp.initialize()


def test_a_saved_pipeline_keeps_its_biLM_when_the_default_changes(tmp_path, monkeypatch):
    """A pipeline saved with the default model (its config says bilm = null) carries the
    weights: loading it never resolves the default again, so a new default changes nothing."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    nlp.initialize()
    assert nlp.config["components"]["elmo"]["model"]["bilm"] is None
    before = nlp("We saw a play. Let us play chess.")._.elmo
    nlp.to_disk(tmp_path / "pipeline")
    from spacy_elmo.bilm import loading
    from spacy_elmo.bilm.errors import BundledModelNotFound

    monkeypatch.setattr(loading, "DEFAULT_MODEL", "no_such_default")
    with pytest.raises(BundledModelNotFound, match="no_such_default"):
        spacy_elmo.load_bilm()  # the patched default is the one resolved
    after = spacy.load(tmp_path / "pipeline")("We saw a play. Let us play chess.")._.elmo
    numpy.testing.assert_array_equal(before, after)
