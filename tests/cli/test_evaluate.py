"""`python -m spacy_elmo evaluate MODEL TEXT`: the report in text and JSON, skipped lines, errors
(its use after pretraining is in tests/cli/test_pretrain.py)."""
import json

import pytest
from typer.testing import CliRunner

from spacy_elmo.bilm import load_bilm, save_bilm
from spacy_elmo.cli.app import app
from spacy_elmo.cli.main import main  # noqa: F401  (registers the commands)
from spacy_elmo.training.evaluation import evaluate_perplexity

from ..conftest import random_bilm
from ..training.helpers import single_thread, write_corpus  # noqa: F401
from .helpers import run_cli

WORDS = ["the", "cat", "sat", "on", "a", "mat", "."]
LINES = ["the cat sat on the mat .", "a cat sat .", "the mat sat on a cat ."]
SENTENCES = [line.split() for line in LINES]

runner = CliRunner()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    bilm = random_bilm(seed=1)
    bilm.set_softmax(["<S>", "</S>", "<UNK>", *WORDS])
    return save_bilm(bilm, tmp_path_factory.mktemp("lm") / "model")


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "test.txt"
    path.write_text("\n".join(LINES + ["x" * 40]) + "\n", encoding="utf8")
    return path


def evaluate(*args):
    return runner.invoke(app, ["evaluate", *map(str, args), "--batch-size", "2", "--unroll-steps", "4", "--max-line-chars", "30", "--threads", "1"])


def test_the_report_gives_both_directions_the_mean_and_the_token_count(model, text):
    expected = evaluate_perplexity(load_bilm(model), SENTENCES, batch_size=2, unroll_steps=4)
    assert expected.n_tokens == 19 + 3  # each word and each sentence end, per direction
    result = evaluate(model, text, "--quiet")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"forward perplexity  {expected.forward:.3f}",
        f"backward perplexity {expected.backward:.3f}",
        f"mean perplexity     {expected.mean:.3f}  (exp of the mean of both losses)",
        "tokens              22",
    ]
    assert result.stderr.strip() == f"skipped: 1 line too long (over 30 characters) (first: {text}:4)"


def test_json_holds_the_same_numbers_and_the_skips(model, text):
    expected = evaluate_perplexity(load_bilm(model), SENTENCES, batch_size=2, unroll_steps=4)
    result = evaluate(model, text, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "forward": pytest.approx(expected.forward, rel=1e-6),
        "backward": pytest.approx(expected.backward, rel=1e-6),
        "mean": pytest.approx(expected.mean, rel=1e-6),
        "tokens": 22,
        "skipped": {"too long (over 30 characters)": 1},
    }
    assert "%" not in result.output  # no progress bar with --json


def test_a_missing_text_file_is_one_line(model, tmp_path):
    result = evaluate(model, tmp_path / "missing.txt")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "missing.txt" in lines[0]


@pytest.mark.usefixtures("single_thread")
def test_evaluate_explains_that_a_model_without_softmax_has_no_perplexity_before_any_progress(tmp_path):
    text = write_corpus(tmp_path / "text.txt")
    save_bilm(random_bilm(), tmp_path / "no-softmax")
    result = run_cli("evaluate", tmp_path / "no-softmax", text, "--threads", 1)
    assert result.exit_code == 1 and "has no softmax" in result.output and "pretrain --init" in result.output
    assert "token" not in result.output.replace("no softmax", "")  # no progress bar was drawn
