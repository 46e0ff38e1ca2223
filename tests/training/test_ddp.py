"""Data-parallel pretraining: two CPU processes under torchrun (gloo)."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from spacy_elmo.bilm import load_bilm

pytestmark = pytest.mark.slow


def torchrun(out: Path, *args: str) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
        "-m",
        "spacy_elmo",
        "pretrain",
        str(out),
        *args,
        "--device",
        "cpu",
        "--quiet",
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=240, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_two_processes_train_resume_and_the_result_loads(tmp_path):
    rng = random.Random(0)
    sentences = ["the cat sees a dog .", "a dog likes the house .", "the garden runs to a cat ."]
    text = tmp_path / "text.txt"
    text.write_text("".join(rng.choice(sentences) + "\n" for _ in range(200)))
    recipe = [
        str(text),
        "--preset",
        "tiny",
        "--batch-size",
        "4",
        "--unroll-steps",
        "10",
        "--learning-rate",
        "0.5",
        "--log-every",
        "1",
        "--checkpoint-every",
        "20",
    ]
    done = torchrun(tmp_path / "whole", *recipe, "--max-steps", "60")
    assert done.stdout.count("steps 60, tokens 4,800") == 1  # only the main process reports
    records = [json.loads(line) for line in (tmp_path / "whole" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == list(range(1, 61))  # only the main process logs
    losses = [(r["loss_forward"] + r["loss_backward"]) / 2 for r in records]
    assert sum(losses[-10:]) / 10 < sum(losses[:5]) / 5 - 0.5
    bilm = load_bilm(tmp_path / "whole" / "model")
    assert len(bilm.vocab) == 14 and bilm.softmax is not None
    state = json.loads((tmp_path / "whole" / "checkpoints" / "step-000000060" / "state.json").read_text())
    cursors = [rank["cursor"] for rank in state["ranks"]]
    assert len(cursors) == 2 and cursors[0] != cursors[1]  # each process reads its own lines

    torchrun(tmp_path / "part", *recipe, "--max-steps", "25")
    torchrun(tmp_path / "part", "--resume", "--max-steps", "60")
    resumed = load_bilm(tmp_path / "part" / "model").state_dict()
    for name, tensor in bilm.state_dict().items():
        torch.testing.assert_close(resumed[name], tensor, rtol=1e-5, atol=1e-6)
