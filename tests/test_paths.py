"""`staged_output`: an output written beside its place, moved there only once complete."""
import pytest

from spacy_elmo.paths import staged_output


def test_a_file_appears_only_once_written(tmp_path):
    output = tmp_path / "out" / "model.onnx"
    with staged_output(output) as staging:
        staging.write_text("new")
        assert not output.exists() and staging.parent == output.parent and staging.name.startswith(".model.onnx.partial-")
    assert output.read_text() == "new"
    assert [p.name for p in output.parent.iterdir()] == ["model.onnx"]


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_an_error_leaves_a_file_as_it_was(tmp_path, error):
    output = tmp_path / "model.onnx"
    output.write_text("old")
    with pytest.raises(error), staged_output(output) as staging:
        staging.write_text("half")
        raise error
    assert output.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["model.onnx"]


def test_a_folder_replaces_a_folder_whole_or_not_at_all(tmp_path):
    output = tmp_path / "pipeline"
    output.mkdir()
    (output / "stale").write_text("old")
    with pytest.raises(KeyboardInterrupt), staged_output(output) as staging:
        staging.mkdir()
        (staging / "config.cfg").write_text("half")
        raise KeyboardInterrupt
    assert [p.name for p in output.iterdir()] == ["stale"]
    with staged_output(output) as staging:
        staging.mkdir()
        (staging / "config.cfg").write_text("new")
    assert [p.name for p in output.iterdir()] == ["config.cfg"]
    assert [p.name for p in tmp_path.iterdir()] == ["pipeline"]
