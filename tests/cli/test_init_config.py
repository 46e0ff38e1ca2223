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
