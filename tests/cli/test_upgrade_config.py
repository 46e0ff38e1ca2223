"""`python -m spacy_elmo upgrade-config CONFIG OUTPUT`: where the upgraded config goes, what the
command says, and its one-line errors (the rewrite itself: tests/pipeline/test_config_upgrade.py)."""
from thinc.api import Config
from typer.testing import CliRunner

from spacy_elmo.cli.app import app
from spacy_elmo.cli.main import main  # noqa: F401  (registers the commands)
from spacy_elmo.pipeline.config_upgrade import upgrade_config

OLD = '[components]\n\n[components.elmo]\nfactory = "elmo"\nmodel = "en_base"\nwindow = 50\n'
CURRENT = '[components]\n\n[components.elmo]\nfactory = "elmo"\n\n[components.elmo.model]\n@architectures = "spacy-elmo.ElmoModel.v2"\nbilm = "en_base"\n'

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, ["upgrade-config", *map(str, args)])


def test_the_upgraded_config_is_written_and_the_changes_listed(tmp_path):
    (tmp_path / "old.cfg").write_text(OLD, encoding="utf8")
    result = invoke(tmp_path / "old.cfg", tmp_path / "new.cfg")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        f"wrote {tmp_path / 'new.cfg'} (upgraded: elmo.model -> elmo.model.bilm, elmo.window, "
        "components.elmo.model -> spacy-elmo.ElmoModel.v2)"
    )
    block = Config().from_str((tmp_path / "new.cfg").read_text(encoding="utf8"), interpolate=False)["components"]["elmo"]["model"]
    assert dict(block) == {"@architectures": "spacy-elmo.ElmoModel.v2", "bilm": "en_base", "window": 50}


def test_a_current_config_is_written_unchanged_and_said_so(tmp_path):
    (tmp_path / "cfg").write_text(CURRENT, encoding="utf8")
    result = invoke(tmp_path / "cfg", tmp_path / "out.cfg")
    assert result.exit_code == 0 and result.stdout.strip() == f"wrote {tmp_path / 'out.cfg'} (nothing to change)"
    assert Config().from_str((tmp_path / "out.cfg").read_text(encoding="utf8"), interpolate=False) == Config().from_str(CURRENT, interpolate=False)


def test_a_dash_prints_the_config_and_writes_no_file(tmp_path):
    (tmp_path / "old.cfg").write_text(OLD, encoding="utf8")
    result = invoke(tmp_path / "old.cfg", "-")
    assert result.exit_code == 0
    assert result.stdout == upgrade_config(OLD)[0] + "\n"
    assert not (tmp_path / "-").exists()


def test_errors_are_one_line_and_write_nothing(tmp_path):
    result = invoke(tmp_path / "missing.cfg", tmp_path / "out.cfg")
    assert result.exit_code == 1 and result.stderr.startswith("error: ") and str(tmp_path / "missing.cfg") in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    (tmp_path / "broken.cfg").write_text("[components\nfactory = ", encoding="utf8")
    result = invoke(tmp_path / "broken.cfg", tmp_path / "out.cfg")
    assert result.exit_code == 1 and result.stderr.startswith("error: cannot read the config: ")
    assert not (tmp_path / "out.cfg").exists()
