"""`python -m spacy_elmo models` and `download`: the listing of bundled and published models, and
the cache (downloads from a server: tests/bilm/test_remote.py)."""
import re

import pytest
from typer.testing import CliRunner

from spacy_elmo.bilm.loading import BUNDLED_DIR, DEFAULT_MODEL, bundled_models
from spacy_elmo.bilm.published import PUBLISHED
from spacy_elmo.bilm.remote import loadable_path, model_folder
from spacy_elmo.cli.app import app
from spacy_elmo.cli.main import main  # noqa: F401  (registers the commands)

runner = CliRunner()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache, and no network: a download attempt fails at once."""
    monkeypatch.setenv("SPACY_ELMO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SPACY_ELMO_OFFLINE", "1")
    return tmp_path / "cache"


def listing():
    result = runner.invoke(app, ["models"])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_every_model_is_listed_once_and_the_cache_folder_last(cache):
    lines = listing()
    assert [line.split()[0] for line in lines[:-1]] == bundled_models() + list(PUBLISHED)
    assert lines[-1] == f"cache folder: {cache} (set $SPACY_ELMO_CACHE to move it)"


def test_bundled_models_with_their_size_and_the_default_marked(cache):
    lines = {line.split()[0]: line for line in listing()}
    assert DEFAULT_MODEL in bundled_models()
    for name in bundled_models():
        match = re.fullmatch(rf"{name} +en +bundled( \(default\))?, (\d+\.\d) MB", lines[name])
        assert match, lines[name]
        assert (match.group(1) is not None) == (name == DEFAULT_MODEL)
        size = sum(f.stat().st_size for f in (BUNDLED_DIR / name).iterdir()) / 1e6
        assert float(match.group(2)) == pytest.approx(size, abs=0.05)


def test_published_models_not_cached_give_the_float32_size(cache):
    lines = {line.split()[0]: line for line in listing()}
    assert lines["elmo-original"] == (
        "elmo-original        en   published, 93.6 M parameters, not cached (about 374 MB of float32 weights)"
    )
    assert lines["nlpl-212"] == "nlpl-212             ru   published, size unknown, not cached"


def test_a_model_placed_in_the_cache_by_hand_is_listed_and_downloaded_without_the_network(cache):
    folder = loadable_path("efml-de")  # an archive model: its unpacked folder
    folder.mkdir(parents=True)
    (folder / "encoder.pkl").write_bytes(b"\0" * 2_500_000)
    (folder / "char.dic").write_bytes(b"\0" * 1_000_000)
    lines = {line.split()[0]: line for line in listing()}
    assert lines["efml-de"] == f"efml-de              de   published, 94.1 M parameters, cached, 3.5 MB in {folder}"
    result = runner.invoke(app, ["download", "efml-de"])
    assert result.exit_code == 0 and result.output == f"efml-de: {folder}\n"


def test_download_errors_are_one_line(cache):
    result = runner.invoke(app, ["download", "elmo-small"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: elmo-small is not cached and $SPACY_ELMO_OFFLINE is set; place the files by hand (download ")
    assert str(model_folder("elmo-small") / "weights.hdf5") in lines[0]
    result = runner.invoke(app, ["download", "elmo-tiny"])
    assert result.exit_code == 1
    assert result.output.strip() == "error: no published model named 'elmo-tiny'; `python -m spacy_elmo models` lists the names"
