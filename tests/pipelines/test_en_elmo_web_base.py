"""The committed pipeline `pipelines/en_elmo_web_base`: it loads offline from a clone, names the
bundled biLM instead of carrying its weights, annotates the README's sentence as the README shows,
and, scored on the UD English-EWT test set (gold words and sentences), gives the figures its meta
states."""
import ast
import json
import os
import re
import sys
from pathlib import Path

import pytest
import spacy

from spacy_elmo import __version__
from spacy_elmo.corpora import corpus_docs

from ..wheels import build_wheel, install_offline, run

REPO = Path(__file__).resolve().parents[2]
PIPELINE = REPO / "pipelines" / "en_elmo_web_base"
DATA = Path(os.environ.get("SPACY_ELMO_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="module")
def nlp():
    return spacy.load(PIPELINE)


def test_the_folder_is_a_spacy_pipeline_on_the_bundled_bilm(nlp):
    meta = json.loads((PIPELINE / "meta.json").read_text(encoding="utf8"))
    assert (meta["lang"], meta["name"]) == ("en", "elmo_web_base")
    assert nlp.pipe_names == ["elmo", "tok2vec", "tagger", "morphologizer", "parser", "trainable_lemmatizer", "ner"]
    assert sorted(nlp.get_pipe("ner").labels) == ["LOC", "ORG", "PER"]
    major, minor = __version__.split(".")[:2]
    assert meta["requirements"] == [f"spacy-elmo>={major}.{minor}.0,<{major}.{int(minor) + 1}.0"]
    assert (PIPELINE / "elmo" / "model").stat().st_size < 10_000  # en_base_v2 by name and sha256
    assert sum(p.stat().st_size for p in PIPELINE.rglob("*") if p.is_file()) < 16_000_000
    assert set(spacy.util.load_config(PIPELINE / "config.cfg")["paths"].values()) == {None}  # no machine's paths


def test_the_licence_is_the_one_package_pipeline_writes():
    """CC BY-SA 4.0 with the data's and en_base_v2's attribution; `spacy package` ships it (the
    wheel's contents: tests/docs/test_readme.py, which runs the documented packaging commands)."""
    sys.path.insert(0, str(REPO / "scripts"))
    from package_pipeline import licence_text

    assert (PIPELINE / "LICENSE").read_text(encoding="utf8") == licence_text("en_elmo_web_base", "en_base_v2")


def test_the_readme_example_shows_what_the_pipeline_gives(nlp):
    readme = (REPO / "README.md").read_text(encoding="utf8")
    text = re.search(r'doc = nlp\("([^"]+)"\)', readme).group(1)
    tokens_shown = ast.literal_eval(re.search(r"\.head\.text\) for t in doc\]\[:4\]\s+# (\[.*\])", readme).group(1))
    ents_shown = ast.literal_eval(re.search(r"for e in doc\.ents\]\s+# (\[.*\])", readme).group(1))
    doc = nlp(text)
    assert [(t.text, t.pos_, t.dep_, t.head.text) for t in doc][:4] == tokens_shown
    assert [(e.text, e.label_) for e in doc.ents] == ents_shown


def test_the_model_block_is_v2_and_takes_the_documented_overrides(nlp):
    block = spacy.util.load_config(PIPELINE / "config.cfg")["components"]["elmo"]["model"]
    assert block["@architectures"] == "spacy-elmo.ElmoModel.v2"
    assert (block["compute_dtype"], block["runtime"]) == ("float32", "torch")
    text = "We saw a play. Let us play chess."
    overrides = {"compute_dtype": "int8", "batch_size": 8, "context": "doc", "window": 32, "stride": 24}
    int8 = spacy.load(PIPELINE, config={"components": {"elmo": {"model": overrides}}})
    settings = int8.get_pipe("elmo").model.attrs["settings"]
    assert (settings.compute_dtype, settings.batch_size, settings.context, settings.window) == ("int8", 8, "doc", 32)
    assert [t.pos_ for t in int8(text)] == [t.pos_ for t in nlp(text)]


@pytest.mark.slow
def test_the_test_set_scores_are_those_of_the_meta(nlp):
    ud, uner = DATA / "ud-ewt", DATA / "uner-ewt"
    conllu = next(iter(sorted(ud.glob("en_ewt-ud-test.conllu*"))), None)
    if conllu is None or not (uner / "en_ewt-ud-test.iob2").is_file():
        pytest.skip(f"UD English-EWT / UNER test files not found under {DATA}; set SPACY_ELMO_DATA")
    sys.path.insert(0, str(REPO / "scripts"))
    from evaluate_pipeline import evaluate

    sentences, _ = corpus_docs(nlp.vocab, conllu, ner=uner / "en_ewt-ud-test.iob2", n_sents=1)
    docs, _ = corpus_docs(nlp.vocab, conllu, ner=uner / "en_ewt-ud-test.iob2", n_sents=10)
    scores = evaluate(nlp, sentences, docs)
    stated = nlp.meta["performance"]
    for key in ("tag_acc", "pos_acc", "morph_acc", "lemma_acc", "dep_uas_conll18", "dep_las_conll18", "sents_f", "ents_f"):
        assert scores[key] == pytest.approx(stated[key], abs=5e-5), key


ANNOTATE = """
import json, sys, spacy
nlp = spacy.load(sys.argv[1])
print(json.dumps([[(t.tag_, t.pos_, str(t.morph), t.lemma_, t.dep_, t.head.i, t.ent_type_, t.is_sent_start) for t in doc]
                  for doc in nlp.pipe(json.loads(sys.argv[2]))]))
"""
TEXTS = ["Ada Lovelace wrote the first program for Charles Babbage's engine in London.", "We saw a play. Let us play chess."]


@pytest.mark.slow
def test_the_wheel_of_the_committed_pipeline_installs_offline_and_annotates_the_same(tmp_path):
    wheel = build_wheel(PIPELINE, tmp_path)
    assert wheel.stat().st_size < 20_000_000
    python = install_offline(wheel, tmp_path)
    installed = json.loads(run(str(python), "-c", ANNOTATE, "en_elmo_web_base", json.dumps(TEXTS), cwd=tmp_path))
    in_repo = json.loads(run(sys.executable, "-c", ANNOTATE, str(PIPELINE), json.dumps(TEXTS), cwd=tmp_path))
    assert installed == in_repo and installed[0][0][6] == "PER"  # Ada
