"""`python -m spacy_elmo init-config`: a bad biLM name or language is one line, and no config."""
import pytest
from typer.testing import CliRunner

from spacy_elmo.cli.app import app
from spacy_elmo.cli.main import main  # noqa: F401  (registers the commands)


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--bilm", "nosuch_model"], "error: no model named 'nosuch_model'"),
        (["--bilm", "missing/weights.hdf5"], "error: missing/weights.hdf5: no such file or folder"),
        (["--lang", "english"], "error: spaCy has no language 'english'; use a language code such as en"),
    ],
)
def test_a_bad_bilm_or_language_is_refused_when_writing(tmp_path, extra, message):
    result = CliRunner().invoke(app, ["init-config", str(tmp_path / "config.cfg"), *extra])
    assert result.exit_code == 1 and result.output.startswith(message) and len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "config.cfg").exists()


def test_refuses_to_overwrite_without_force_and_makes_the_folder(tmp_path):
    from typer.testing import CliRunner

    from spacy_elmo.cli.main import app

    output = tmp_path / "training" / "config.cfg"
    first = CliRunner().invoke(app, ["init-config", str(output), "--pipeline", "tagger"])
    assert first.exit_code == 0 and output.is_file(), first.output
    output.write_text("mine", encoding="utf8")
    second = CliRunner().invoke(app, ["init-config", str(output), "--pipeline", "tagger"])
    assert second.exit_code == 1 and second.output.strip() == f"error: {output} exists; pass --force to overwrite it"
    assert output.read_text(encoding="utf8") == "mine"
    third = CliRunner().invoke(app, ["init-config", str(output), "--pipeline", "tagger", "--force"])
    assert third.exit_code == 0 and "[components.elmo]" in output.read_text(encoding="utf8")


def test_writes_the_v2_model_block():
    from spacy_elmo.cli.init_config import elmo_config

    block = elmo_config(["ner"])["components"]["elmo"]["model"]
    assert block["@architectures"] == "spacy-elmo.ElmoModel.v2"
    assert (block["compute_dtype"], block["runtime"]) == ("float32", "torch") and "dtype" not in block


@pytest.mark.parametrize("pipeline,pos_scored", [(["tagger", "parser", "ner"], False), (["tagger", "morphologizer"], True)])
def test_scores_only_what_the_pipeline_predicts(pipeline, pos_scored):
    from spacy_elmo.cli.init_config import elmo_config

    weights = elmo_config(pipeline)["training"]["score_weights"]
    assert weights["tag_acc"] and (weights["pos_acc"] is not None) == pos_scored
