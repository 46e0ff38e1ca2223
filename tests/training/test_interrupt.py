"""Ctrl-C stops a run cleanly at a step boundary; resuming it reproduces an uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from spacy_elmo.bilm import load_bilm
from spacy_elmo.training import TrainingSettings, pretrain, resume
from spacy_elmo.training.presets import preset_architecture

from .helpers import single_thread  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("single_thread")]

STEPS = 150


def test_interrupted_and_resumed_run_equals_an_uninterrupted_one(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("".join(f"the cat {i % 7} sat on mat {i % 5} .\n" for i in range(100)))
    settings = dict(batch_size=2, unroll_steps=5, epochs=None, checkpoint_every=1000, log_every=1)
    out = tmp_path / "interrupted"
    command = [
        sys.executable,
        "-m",
        "spacy_elmo",
        "pretrain",
        str(out),
        str(text),
        "--preset",
        "tiny",
        "--batch-size",
        "2",
        "--unroll-steps",
        "5",
        "--max-steps",
        str(STEPS),
        "--checkpoint-every",
        "1000",
        "--log-every",
        "1",
        "--device",
        "cpu",
        "--quiet",
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    metrics = out / "metrics.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if metrics.is_file() and len(metrics.read_text().splitlines()) >= 5:
            process.send_signal(signal.SIGINT)
            break
        time.sleep(0.02)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stdout + stderr
    stopped_at = json.loads(metrics.read_text().splitlines()[-1])["step"]
    assert 5 <= stopped_at < STEPS, "the run ended before it could be interrupted"
    assert f"steps {stopped_at}," in stdout and "stopped: interrupted" in stdout
    assert f"checkpoints/step-{stopped_at:09d}" in stderr
    assert f"python -m spacy_elmo pretrain {out} --resume" in stderr
    assert not (out / "model").exists()
    assert [p.name for p in (out / "checkpoints").iterdir()] == [f"step-{stopped_at:09d}"]

    # One thread here, as in the subprocess: sums must run in the same order to give the same floats.
    resumed = resume(out, {"max_steps": STEPS}, show_progress=False)
    settings = TrainingSettings(**settings, max_steps=STEPS)
    whole = pretrain(tmp_path / "whole", [text], preset_architecture("tiny"), settings, show_progress=False)
    assert resumed.steps == whole.steps == STEPS
    a = load_bilm(out / "model").state_dict()
    b = load_bilm(tmp_path / "whole" / "model").state_dict()
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-5, atol=1e-6)
