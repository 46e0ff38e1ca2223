"""`embed_files` (`embed --engine ray`) around its Ray run: the checks made before Ray starts, the
Ray session it starts or joins, the output folder of a failed run, our error found inside Ray's
wrappers, and Ray's own notices held back (the runs themselves: test_ray_data.py)."""
import os
from contextlib import nullcontext

import pytest
from typer.testing import CliRunner

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

from ray.exceptions import RayError  # noqa: E402

from spacy_elmo.bilm.errors import ModelFormatError  # noqa: E402
from spacy_elmo.cli.app import app  # noqa: E402
from spacy_elmo.cli.main import main  # noqa: E402,F401  (registers the commands)
from spacy_elmo.errors import SpacyElmoError  # noqa: E402
from spacy_elmo.ray_data import run  # noqa: E402
from spacy_elmo.ray_data.run import own_error, ray_session  # noqa: E402

from .helpers import model_args  # noqa: E402


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--workers", "0"], "workers (concurrency) must be a whole number of at least 1, got 0"),
        (["--cpus-per-worker", "0"], "each worker needs some CPU"),
        (["--model", "nope.hdf5"], "nope.hdf5: no such file or folder"),
        (["--lang", "english"], "spaCy has no language 'english'"),
        (["--layer", "middle"], "unknown 'layer' 'middle'"),
    ],
)
def test_what_can_be_checked_is_checked_before_ray_starts(allennlp_model_files, tmp_path, monkeypatch, extra, message):
    from spacy_elmo.ray_data import run

    def no_ray(*args):
        raise AssertionError("Ray was started")

    monkeypatch.setattr(run, "ray_session", no_ray)
    (tmp_path / "in.txt").write_text("a b\n", encoding="utf8")
    args = ["embed", str(tmp_path / "in.txt"), "-o", str(tmp_path / "out"), "--engine", "ray", *model_args(allennlp_model_files), *extra]
    result = CliRunner().invoke(app, args)
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert result.exit_code == 1 and len(errors) == 1 and message in errors[0], (result.output, result.exception)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("ours", [True, False])
def test_ray_datas_reports_of_our_errors_stay_off_the_console(monkeypatch, ours):
    import logging

    from spacy_elmo.errors import SpacyElmoError
    from spacy_elmo.ray_data.run import clear_errors

    consoles = [h for h in logging.getLogger("ray.data").handlers if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)]
    assert consoles
    shown = []
    for handler in consoles:
        monkeypatch.setattr(handler, "emit", shown.append)
    with pytest.raises(SpacyElmoError if ours else RuntimeError):
        with clear_errors():
            # A logger Ray Data makes once the run is under way, as its executor's parts load.
            logging.getLogger("ray.data._internal.made_during_the_run").error("Traceback of a worker's failure")
            raise SpacyElmoError("the model cannot load") if ours else RuntimeError("not ours")
    assert [record.getMessage() for record in shown] == ([] if ours else ["Traceback of a worker's failure"] * len(consoles))


def test_rays_notices_are_quieted_only_for_the_start_and_a_users_setting_wins(monkeypatch):
    import logging

    from spacy_elmo.ray_data.run import QUIET_LOGGERS, _quiet

    monkeypatch.delenv("RAY_BACKEND_LOG_LEVEL", raising=False)
    with _quiet():
        assert os.environ["RAY_BACKEND_LOG_LEVEL"] == "fatal"
        assert all(logging.getLogger(name).level == logging.ERROR for name in QUIET_LOGGERS)
    assert "RAY_BACKEND_LOG_LEVEL" not in os.environ
    assert all(logging.getLogger(name).level == logging.NOTSET for name in QUIET_LOGGERS)
    monkeypatch.setenv("RAY_BACKEND_LOG_LEVEL", "info")
    with _quiet():
        assert os.environ["RAY_BACKEND_LOG_LEVEL"] == "info"


def test_ray_session_starts_a_local_ray_with_the_cpus_asked_and_stops_only_its_own(monkeypatch):
    calls = []
    monkeypatch.setattr(run.ray, "is_initialized", lambda: False)
    monkeypatch.setattr(run.ray, "init", lambda **kwargs: calls.append(("init", kwargs)))
    monkeypatch.setattr(run.ray, "shutdown", lambda: calls.append(("shutdown",)))
    monkeypatch.setattr(run.os, "cpu_count", lambda: 2)
    with ray_session(None, workers=3, cpus_per_worker=1.5):
        assert calls == [("init", {"num_cpus": 5, "include_dashboard": False, "log_to_driver": False})]
    assert calls[-1] == ("shutdown",)
    calls.clear()
    with pytest.raises(RuntimeError, match="the run failed"):
        with ray_session("ray://head:10001", workers=1, cpus_per_worker=1):
            raise RuntimeError("the run failed")
    assert calls == [("init", {"address": "ray://head:10001"}), ("shutdown",)]
    calls.clear()
    monkeypatch.setattr(run.ray, "is_initialized", lambda: True)
    with ray_session(None, workers=1, cpus_per_worker=1):
        pass
    assert calls == []  # a Ray already running is the caller's to stop


def test_embed_files_refuses_an_existing_output_folder_before_ray_starts(tmp_path, monkeypatch):
    def no_ray(*args):
        raise AssertionError("Ray was started")

    monkeypatch.setattr(run, "ray_session", no_ray)
    (tmp_path / "in.txt").write_text("a b\n", encoding="utf8")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "earlier.parquet").write_bytes(b"an earlier run's output")
    with pytest.raises(SpacyElmoError, match="already exists; name a new folder"):
        run.embed_files([str(tmp_path / "in.txt")], str(tmp_path / "out"))
    assert (tmp_path / "out" / "earlier.parquet").exists()


def test_a_failed_run_removes_the_output_folder_it_began(tmp_path, monkeypatch):
    def failing_read(paths, text_column, rows_per_block):
        (tmp_path / "out").mkdir()
        (tmp_path / "out" / "part.parquet").write_bytes(b"half written")
        raise SpacyElmoError("the reader failed")

    monkeypatch.setattr(run, "ray_session", lambda *args: nullcontext())
    monkeypatch.setattr(run, "read_inputs", failing_read)
    (tmp_path / "in.txt").write_text("a b\n", encoding="utf8")
    with pytest.raises(SpacyElmoError, match="the reader failed"):
        run.embed_files([str(tmp_path / "in.txt")], str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


class RayWrapper(RayError, SpacyElmoError):
    """As Ray wraps a worker's exception: a class of both, the original as `cause`."""

    def __init__(self, text, cause):
        super().__init__(text)
        self.cause = cause


def test_own_error_finds_ours_inside_rays_wrappers_without_the_retry_advice():
    ours = ModelFormatError("nope.hdf5: no such file or folder\nRay Data will retry the task ...")
    inner = RuntimeError("map task failed")
    inner.__cause__ = RayWrapper("wrapped: nope.hdf5", cause=ours)
    found = own_error(RuntimeError("the dataset failed", inner))
    assert type(found) is ModelFormatError and str(found) == "nope.hdf5: no such file or folder"
    assert own_error(RuntimeError("not ours")) is None
    first, second = RuntimeError("one"), RuntimeError("two")
    first.__context__, second.__context__ = second, first  # a cycle ends the search
    assert own_error(first) is None
