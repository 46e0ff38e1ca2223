"""`python -m spacy_elmo pretrain`: a run and its resume through the command, its errors before
training starts, the bundled model as --init, durations and counts, and the OpenMP wait policy
(`pretrain` and `resume` themselves: tests/training/test_run.py)."""

import json

import pytest
import spacy
import typer

from spacy_elmo.bilm import load_bilm
from spacy_elmo.bilm.loading import DEFAULT_MODEL
from spacy_elmo.cli.pretrain import parse_count, parse_duration

from ..training.helpers import single_thread, write_corpus  # noqa: F401
from .helpers import run_cli

pytestmark = pytest.mark.usefixtures("single_thread")


def test_pretrain_and_evaluate_commands(tmp_path):
    text = write_corpus(tmp_path / "text.txt")
    out = tmp_path / "run"
    result = run_cli(
        "pretrain",
        out,
        text,
        "--preset",
        "tiny",
        "--set",
        "lstm.dim=12",
        "--batch-size",
        2,
        "--unroll-steps",
        4,
        "--max-steps",
        3,
        "--max-vocab-size",
        8,
        "--storage-dtype",
        "float16",
        "--quiet",
    )
    assert result.exit_code == 0, result.output
    assert "steps 3" in result.output
    assert json.loads((out / "model" / "config.json").read_text())["storage_dtype"] == "float16"
    bilm = load_bilm(out / "model")
    assert bilm.config.lstm_dim == 12 and len(bilm.vocab) == 8
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": str(out / "model")}})
    assert nlp("the cat sees a dog")._.elmo.shape == (3, 5, 16)
    result = run_cli("evaluate", out / "model", text, "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["mean"] == pytest.approx((scores["forward"] * scores["backward"]) ** 0.5, rel=1e-6)
    result = run_cli("pretrain", out, "--resume", "--max-steps", 5, "--quiet")
    assert result.exit_code == 0, result.output
    assert "steps 5" in result.output


@pytest.mark.parametrize(
    "content,message",
    [
        (b"", "is empty"),
        (b"\xff\xfe\xfa\n", "no sentence found in 1 lines (1 line not UTF-8"),
        (b"y" * 100_000 + b"\n", "too long"),
    ],
)
def test_bad_text_is_a_clear_error_before_training(tmp_path, content, message):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    result = run_cli("pretrain", tmp_path / "run", bad, "--preset", "tiny", "--max-steps", 1, "--quiet")
    assert result.exit_code == 1
    assert message in result.output and str(bad) in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_usage_errors_are_reported_without_traceback(tmp_path):
    text = write_corpus(tmp_path / "text.txt")
    for args, message in [
        (["--preset", "huge"], "unknown preset 'huge'"),
        (["--preset", "tiny", "--set", "lstm.width=3"], "unknown architecture setting 'lstm.width'"),
        (["--preset", "tiny", "--optimizer", "lbfgs"], "unknown optimizer 'lbfgs'"),
        (["--lang", "zz"], "no tokenizer for language 'zz'"),
    ]:
        result = run_cli("pretrain", tmp_path / "run", text, *args, "--quiet")
        assert result.exit_code == 1 and message in result.output, result.output
    result = run_cli("evaluate", tmp_path, text)
    assert result.exit_code == 1 and "error:" in result.output


def test_too_little_text_for_one_batch_is_a_clear_error(tmp_path):
    text = tmp_path / "short.txt"
    text.write_text("just four words here\n")
    result = run_cli("pretrain", tmp_path / "run", text, "--preset", "tiny", "--epochs", 1, "--quiet")
    assert result.exit_code == 1 and "less than one batch needs" in result.output, result.output


def test_commands_take_a_bundled_model_by_name(tmp_path):
    text = write_corpus(tmp_path / "text.txt", n_lines=8)
    result = run_cli("evaluate", DEFAULT_MODEL, text, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.strip().splitlines()[-1])["tokens"] > 0
    result = run_cli(
        "pretrain", tmp_path / "tuned", text, "--init", DEFAULT_MODEL, "--max-steps", "1", "--batch-size", "2",
        "--unroll-steps", "5", "--negatives", "16", "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "tuned" / "run.json").read_text())["init"].endswith(DEFAULT_MODEL)


def test_pretrain_spins_its_threads_and_other_commands_sleep():
    """`python -m spacy_elmo pretrain` starts torch with OMP_WAIT_POLICY=ACTIVE, the other commands
    with PASSIVE, and an exported value wins."""
    import os
    import subprocess
    import sys

    probe = "import os, runpy, sys; sys.argv = ['spacy_elmo', sys.argv[1], '--help']; "
    probe += "sys.stdout = open(os.devnull, 'w'); "
    probe += "exec('try:\\n runpy.run_module(\"spacy_elmo\", run_name=\"__main__\")\\nexcept SystemExit: pass'); "
    probe += "sys.stdout = sys.__stdout__; print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}

    def policy(command: str, **extra: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe, command], env={**env, **extra}, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    assert policy("pretrain") == "ACTIVE"
    assert policy("embed") == "PASSIVE"
    assert policy("pretrain", OMP_WAIT_POLICY="PASSIVE") == "PASSIVE"


@pytest.mark.parametrize(
    "args,message",
    [
        (["--resume", "TEXT", "--preset", "tiny", "--batch-size", 4], "with --resume the run's stored settings apply; remove TEXTS, --preset, --batch-size"),
        ([], "give the training text files after OUTPUT_DIR"),
        (["TEXT", "--init", DEFAULT_MODEL, "--set", "lstm.dim=12"], "--init fixes the architecture; drop --preset / --set"),
    ],
)
def test_conflicting_or_missing_arguments_are_one_error_before_any_run(tmp_path, args, message):
    text = write_corpus(tmp_path / "text.txt", n_lines=4)
    result = run_cli("pretrain", tmp_path / "run", *(text if a == "TEXT" else a for a in args), "--quiet")
    assert result.exit_code == 1 and result.output.strip().splitlines() == [f"error: {message}"], result.output
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("text,seconds", [(None, None), ("45", 45.0), ("45s", 45.0), (" 90m ", 5400.0), ("1.5h", 5400.0), ("2d", 172800.0)])
def test_durations_read_in_seconds_minutes_hours_or_days(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text,count", [(None, None), ("500000", 500000), ("50M", 50_000_000), ("1.5b", 1_500_000_000), ("2k", 2000), ("1e6", 1_000_000)])
def test_counts_read_with_a_thousand_million_or_billion_suffix(text, count):
    assert parse_count(text, "--token-budget") == count


def test_unreadable_durations_and_counts_name_their_option(tmp_path):
    for bad in ("soon", "5w", "-1h"):
        with pytest.raises(typer.BadParameter, match=f"cannot read duration '{bad}'"):
            parse_duration(bad)
    with pytest.raises(typer.BadParameter, match="cannot read count '50 million'") as error:
        parse_count("50 million", "--token-budget")
    assert error.value.param_hint == "--token-budget"
    text = write_corpus(tmp_path / "text.txt", n_lines=4)
    result = run_cli("pretrain", tmp_path / "run", text, "--max-time", "soon", "--quiet")
    assert result.exit_code == 2 and "--max-time" in result.output and "cannot read duration 'soon'" in result.output
    assert not (tmp_path / "run").exists()
