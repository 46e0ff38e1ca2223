"""Bad input to the CLI and `load_bilm` is one clear line, never a traceback."""
import warnings

import pytest
from typer.testing import CliRunner

from spacy_elmo import load_bilm
from spacy_elmo.bilm.errors import ModelFormatError
from spacy_elmo.bilm.loading import BUNDLED_DIR
from spacy_elmo.cli.main import app
from spacy_elmo.cli.removed_options import REMOVED_OPTIONS

runner = CliRunner()


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("a b\n", encoding="utf8")
    return path


@pytest.mark.parametrize("engine", ["local", "ray"])
def test_options_with_a_bundled_model(text, tmp_path, engine):
    result = runner.invoke(app, ["embed", str(text), "-o", str(tmp_path / "out"), "--options", str(text), "--engine", engine])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"error: {BUNDLED_DIR / 'en_base_v2'} holds its own architecture; options (--options) is only for original hdf5 weights"
    ]


def test_ray_options_for_the_local_engine(text, tmp_path):
    result = runner.invoke(app, ["embed", str(text), "-o", str(tmp_path / "out.hdf5"), "--workers", "2", "--text-column", "body"])
    assert result.exit_code == 1
    assert result.output.strip() == "error: --workers, --text-column: options of --engine ray; the local engine does not use them"


def test_upgrade_config_on_a_file_that_is_not_utf8(tmp_path):
    config = tmp_path / "bad.cfg"
    config.write_bytes(b"\xff\xfe[x]\n")
    result = runner.invoke(app, ["upgrade-config", str(config), str(tmp_path / "out.cfg")])
    assert result.exit_code == 1 and result.output.strip() == f"error: {config}: not UTF-8 text (byte 0: invalid start byte)"


def test_load_bilm_of_something_that_is_not_a_path():
    with pytest.raises(ModelFormatError, match="a model is a name, folder or file path \\(str or Path\\), not int 123"):
        load_bilm(123)


def test_a_model_folder_without_its_vocabulary_still_embeds(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        (folder / name).write_bytes((BUNDLED_DIR / "en_base" / name).read_bytes())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bilm = load_bilm(folder)
    assert any("no vocab.txt for the softmax" in str(w.message) for w in caught)
    reference = load_bilm("en_base")
    reference.drop_softmax()
    assert (bilm.embed_sentences([["a", "b"]])[0] == reference.embed_sentences([["a", "b"]])[0]).all()


@pytest.mark.parametrize("command, old, new", [(c, o, n) for c, names in REMOVED_OPTIONS.items() for o, n in names.items()])
def test_a_removed_option_names_its_new_spelling(tmp_path, command, old, new):
    for arg in ([old, "x"], [f"{old}=x"]):
        result = runner.invoke(app, [command, str(tmp_path / "in"), str(tmp_path / "out"), *arg])
        assert result.exit_code == 2
        assert result.output.strip().splitlines() == [f"error: {old} is now {new}"]
