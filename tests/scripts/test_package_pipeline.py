"""A trained pipeline made ready to ship (scripts/package_pipeline.py) builds a wheel with spaCy's
`spacy package`; installed offline into a fresh virtual environment, `spacy.load(NAME)` gives the
in-repo pipeline's annotations exactly, and its biLM is the bundled one, named, not copied. The
folder written appears only complete; Ctrl-C is one line."""
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import spacy
import typer
from spacy.language import Language
from spacy.training import Example
from typer.testing import CliRunner

from ..wheels import build_wheel, install_offline, run

REPO = Path(__file__).resolve().parents[2]
TEXTS = ["Apple is looking at buying a startup in London.", "We saw a play. Let us play chess."]
SCRIPT = """
import json, sys, spacy
nlp = spacy.load(sys.argv[1])
docs = list(nlp.pipe(json.loads(sys.argv[2])))
print(json.dumps({"tags": [[t.tag_ for t in d] for d in docs], "elmo": [d._.elmo.tolist() for d in docs],
                  "requirements": nlp.meta["requirements"], "torch_free_meta": nlp.meta["license"]}))
"""


def annotations(nlp) -> dict:
    docs = list(nlp.pipe(TEXTS))
    return {"tags": [[t.tag_ for t in d] for d in docs], "elmo": [d._.elmo.tolist() for d in docs]}


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A small pipeline on the bundled en_base: elmo + a tagger, two training steps."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": "en_base"}})
    nlp.add_pipe("tagger", config={"model": {"tok2vec": {"@architectures": "spacy-elmo.ElmoListener.v1", "width": 32, "upstream": "elmo"}}})
    examples = [Example.from_dict(nlp.make_doc(t), {"tags": ["X"] * len(nlp.make_doc(t))}) for t in TEXTS]
    examples[0].reference[0].tag_ = "NNP"
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(2):
        nlp.update(examples, sgd=optimizer)
    path = tmp_path_factory.mktemp("trained") / "model"
    nlp.config["paths"]["train"] = str(path.parent / "train.spacy")  # a training machine's path
    nlp.to_disk(path)
    return path


def test_the_best_finished_seed_on_dev_ships(tmp_path: Path):
    sys.path.insert(0, str(REPO / "scripts"))
    from package_pipeline import best_seed

    config = "[training]\n\n[training.score_weights]\ntag_acc = 0.5\nents_f = 0.5\nents_p = 0.0\nlemma_acc = null\n"
    for seed, (tag, ents, done) in enumerate([(0.90, 0.60, True), (0.80, 0.80, True), (0.99, 0.99, False)]):
        model = tmp_path / f"seed{seed}" / "model-best"
        model.mkdir(parents=True)
        (model / "config.cfg").write_text(config)
        (model / "meta.json").write_text(json.dumps({"performance": {"tag_acc": tag, "ents_f": ents, "ents_p": 1.0}}))
        if done:
            (model.parent / "done.json").write_text("{}")
    assert best_seed(tmp_path) == tmp_path / "seed1" / "model-best"  # 0.80 > 0.75; seed 2 is unfinished
    assert best_seed(tmp_path / "seed0" / "model-best") == tmp_path / "seed0" / "model-best"
    with pytest.raises(SystemExit, match="finished seedN"):
        best_seed(tmp_path / "seed2")


@pytest.mark.slow
def test_the_packaged_wheel_installs_offline_and_annotates_the_same(trained: Path, tmp_path: Path):
    shipped = tmp_path / "en_elmo_test"
    run(sys.executable, "scripts/package_pipeline.py", str(trained), str(shipped), "--name", "elmo_test", "--version", "0.0.1")
    meta = json.loads((shipped / "meta.json").read_text())
    assert meta["license"] == "CC BY-SA 4.0" and meta["requirements"][0].startswith("spacy-elmo>=")
    assert {s["license"] for s in meta["sources"]} == {"CC BY-SA 4.0"}
    assert (shipped / "elmo" / "model").stat().st_size < 10_000  # the bundled biLM by name and hash
    sys.path.insert(0, str(REPO / "scripts"))
    from package_pipeline import licence_text

    licence = (shipped / "LICENSE").read_text(encoding="utf8")
    assert licence == licence_text("en_elmo_test", "en_base") and "# en_base: licence and attribution" in licence
    assert spacy.util.load_config(trained / "config.cfg")["paths"]["train"].endswith("train.spacy")
    assert set(spacy.util.load_config(shipped / "config.cfg")["paths"].values()) == {None}
    expected = annotations(spacy.load(shipped))

    wheel = build_wheel(shipped, tmp_path)
    assert wheel.stat().st_size < 20_000_000
    assert zipfile.ZipFile(wheel).read("en_elmo_test-0.0.1.dist-info/licenses/LICENSE").decode("utf8") == licence
    python = install_offline(wheel, tmp_path)
    got = json.loads(run(str(python), "-c", SCRIPT, "en_elmo_test", json.dumps(TEXTS), cwd=tmp_path))
    assert got["tags"] == expected["tags"]
    assert got["elmo"] == expected["elmo"]  # exactly: the same bundled weights, the same code


def test_a_pipeline_name_that_does_not_exist_is_one_line(tmp_path: Path):
    result = subprocess.run([sys.executable, "-c", "import spacy; spacy.load('en_elmo_no_such_pipeline')"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode != 0
    assert "Can't find model 'en_elmo_no_such_pipeline'" in result.stderr


def interrupted_halfway(nlp, path, **kwargs):
    """A `Language.to_disk` that writes the config, then meets Ctrl-C."""
    path.mkdir()
    (path / "config.cfg").write_text(nlp.config.to_str())
    raise KeyboardInterrupt


def test_ctrl_c_while_writing_is_one_line_and_leaves_the_output_as_it_was(tmp_path: Path, monkeypatch):
    sys.path.insert(0, str(REPO / "scripts"))
    import package_pipeline

    monkeypatch.setattr(package_pipeline, "reference_bundled_bilm", lambda nlp: None)  # no elmo component here
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.to_disk(tmp_path / "trained")
    app = typer.Typer()
    app.command()(package_pipeline.main)
    output = tmp_path / "pipelines" / "en_test"

    def package(version: str):
        return CliRunner().invoke(app, [str(tmp_path / "trained"), str(output), "--name", "test", "--version", version])

    with monkeypatch.context() as patch:
        patch.setattr(Language, "to_disk", interrupted_halfway)
        result = package("0.0.1")
    assert result.exit_code == 130 and result.output.strip().splitlines() == ["error: interrupted"]
    assert list(output.parent.iterdir()) == []
    assert package("0.0.1").exit_code == 0
    with monkeypatch.context() as patch:
        patch.setattr(Language, "to_disk", interrupted_halfway)
        assert package("0.0.2").exit_code == 130
    assert json.loads((output / "meta.json").read_text())["version"] == "0.0.1"
    assert list(output.parent.iterdir()) == [output]
    assert package("0.0.2").exit_code == 0
    assert json.loads((output / "meta.json").read_text())["version"] == "0.0.2"


def test_the_output_replaces_only_a_pipeline_or_an_empty_folder(tmp_path: Path):
    sys.path.insert(0, str(REPO / "scripts"))
    from package_pipeline import check_output

    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("keep")
    with pytest.raises(SystemExit, match="notes is neither a spaCy pipeline nor an empty folder"):
        check_output(tmp_path / "notes")
    (tmp_path / "empty").mkdir()
    check_output(tmp_path / "empty")
    check_output(tmp_path / "new")
