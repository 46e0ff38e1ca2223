"""`spacy train` with configs/ner.cfg end to end: train, load offline, package."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
TEXTS = [
    ("I like London and Berlin.", [(7, 13, "LOC"), (18, 24, "LOC")]),
    ("Alice flew to Paris today.", [(0, 5, "PER"), (14, 19, "LOC")]),
]


def write_corpus(path: Path, tags: bool = False) -> None:
    nlp = spacy.blank("en")
    docs = []
    for text, spans in TEXTS:
        doc = nlp.make_doc(text)
        doc.ents = [doc.char_span(s, e, label=label) for s, e, label in spans]
        for token in doc if tags else []:
            token.tag_ = "CAP" if token.is_title else "LOW"
        docs.append(doc)
    DocBin(docs=docs).to_disk(path)


def spacy_cli(*args: str) -> None:
    result = subprocess.run([sys.executable, "-m", "spacy", *args], capture_output=True, text=True)
    assert result.returncode == 0, f"spacy {args[0]} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


def test_spacy_train_load_and_package(model_files, tmp_path):
    weights_dir = tmp_path / "weights"
    weights_dir.mkdir()
    weights, options = (Path(shutil.copy(f, weights_dir / f.name)) for f in model_files)
    write_corpus(tmp_path / "train.spacy")
    # fmt: off
    spacy_cli("train", str(REPO / "configs" / "ner.cfg"), "--output", str(tmp_path / "out"),
              "--paths.train", str(tmp_path / "train.spacy"), "--paths.dev", str(tmp_path / "train.spacy"),
              "--paths.elmo_model", str(weights), "--paths.elmo_options", str(options),
              "--training.max_steps", "6", "--training.eval_frequency", "3", "--nlp.batch_size", "8")
    # fmt: on
    shutil.rmtree(weights_dir)  # the trained pipeline must not need the original files
    nlp = spacy.load(tmp_path / "out" / "model-best")
    assert nlp.pipe_names == ["elmo", "ner"]
    doc = nlp("Alice flew to Paris today.")
    assert doc._.elmo.shape == (3, len(doc), 32)
    (tmp_path / "pkg").mkdir()
    spacy_cli("package", str(tmp_path / "out" / "model-best"), str(tmp_path / "pkg"),
              "--name", "elmo_test", "--version", "0.0.1", "--build", "none")  # fmt: skip
    meta = (tmp_path / "pkg" / "en_elmo_test-0.0.1" / "meta.json").read_text()
    assert '"spacy-elmo>=' in meta


@pytest.mark.parametrize("config", sorted(p.name for p in (REPO / "configs").glob("*.cfg")))
def test_shipped_configs_pass_spacy_debug_config(config):
    if config.startswith("coref"):
        pytest.importorskip("spacy_experimental", reason="the coref configs need the `coref` extra")
    paths = ["--paths.train", "train.spacy", "--paths.dev", "dev.spacy"]
    if "base_pipeline" in (REPO / "configs" / config).read_text(encoding="utf8"):  # sources components
        paths += ["--paths.base_pipeline", str(REPO / "pipelines" / "en_elmo_web_base")]
    spacy_cli("debug", "config", str(REPO / "configs" / config), *paths)


def test_init_config_wires_a_listener_into_every_component_and_trains(model_files, tmp_path):
    weights, options = model_files
    config = tmp_path / "config.cfg"
    result = subprocess.run(
        [sys.executable, "-m", "spacy_elmo", "init-config", str(config), "--pipeline", "ner,tagger",
         "--bilm", str(weights), "--options", str(options)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = config.read_text()
    assert 'pipeline = ["elmo","ner","tagger"]' in text.replace(", ", ",") and "spacy.Tok2VecListener" not in text
    assert text.count('@architectures = "spacy-elmo.ElmoListener.v1"') == 2
    write_corpus(tmp_path / "train.spacy", tags=True)
    spacy_cli("train", str(config), "--output", str(tmp_path / "out"), "--paths.train", str(tmp_path / "train.spacy"),
              "--paths.dev", str(tmp_path / "train.spacy"), "--training.max_steps", "4", "--training.eval_frequency", "2")  # fmt: skip
    nlp = spacy.load(tmp_path / "out" / "model-best")
    assert nlp.get_pipe("elmo").listening_components == ["ner", "tagger"]


def test_an_elmo_component_nobody_listens_to_is_warned_about(model_files):
    from .helpers import elmo_config

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config(model_files))
    nlp.add_pipe("ner")  # spaCy's own tok2vec: the biLM would run for nothing
    nlp.get_pipe("ner").add_label("PER")
    with pytest.warns(UserWarning, match="no component listens to it"):
        nlp.initialize()
