"""Shared by the pretraining tests (and the `pretrain` and `evaluate` commands' tests in tests/cli)."""

import random
from pathlib import Path

import pytest
import torch


@pytest.fixture
def single_thread():
    """Run torch on one thread: tiny models gain nothing from more, and on a busy machine the
    waiting of a second thread can slow every small operation a hundredfold."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


WORDS = "the a cat dog sees likes runs to house garden small big quickly and".split()


def write_corpus(path: Path, n_lines: int = 60, seed: int = 0) -> Path:
    rng = random.Random(seed)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) + " ." for _ in range(n_lines)]
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path
