"""The training loop driven directly (pretrain/resume run it end to end in test_run.py)."""

import json

import pytest
import torch

from spacy_elmo.training.corpus import TextCorpus
from spacy_elmo.training.ddp import Processes
from spacy_elmo.training.settings import TrainingSettings
from spacy_elmo.training.trainer import INTERRUPTED, PretrainResult, Trainer

from ..conftest import random_bilm
from .helpers import single_thread  # noqa: F401

pytestmark = pytest.mark.usefixtures("single_thread")


def make_trainer(tmp_path, **settings):
    text = tmp_path / "train.txt"
    text.write_text("a b c\nb c\nc a b a\n", encoding="utf8")
    corpus = TextCorpus([text], str.split)
    stats = corpus.scan()
    bilm = random_bilm()
    bilm.set_softmax(["<S>", "</S>", "<UNK>", "a", "b", "c"])
    options = {"batch_size": 2, "unroll_steps": 3, "negatives": 2, "log_every": 1, **settings}
    out = tmp_path / "run"
    out.mkdir()
    return Trainer(out, bilm, corpus, TrainingSettings(**options), Processes(), False, None, stats)


def test_a_step_budget_stops_the_run_logs_each_step_and_writes_the_model(tmp_path):
    trainer = make_trainer(tmp_path, max_steps=2, epochs=None, checkpoint_every=10)
    result = trainer.train(export=False)
    assert (result.steps, result.tokens, result.stopped_by) == (2, 12, "--max-steps 2 reached")
    assert not result.interrupted and result.checkpoint == tmp_path / "run" / "checkpoints" / "step-000000002"
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [(row["step"], row["tokens"]) for row in rows] == [(1, 6), (2, 12)]
    assert (tmp_path / "run" / "model").is_dir()


def test_the_end_of_the_text_ends_the_run_naming_the_epochs(tmp_path):
    # one epoch: 9 tokens and 6 sentence markers = 15 positions, at most 2 steps of 2 rows × 3
    # (the progress bar's total). Row 0 reads "a b c" then "c a b a", row 1 only "b c": after
    # one window row 1 has no target left, so the text ends after 1 step.
    trainer = make_trainer(tmp_path, epochs=1)
    assert trainer.stats.stream_tokens == 15 and trainer._planned_steps() == 2
    result = trainer.train(export=False)
    assert result.stopped_by == "the training text ended (1 epoch, --epochs)" and result.steps == 1
    assert torch.isfinite(torch.tensor(result.loss))


def test_interrupted_is_the_stop_reason_of_a_signal():
    assert PretrainResult(None, 1, 1, None, 0.0, stopped_by=INTERRUPTED).interrupted
    assert not PretrainResult(None, 1, 1, None, 0.0, stopped_by="--max-steps 1 reached").interrupted
