"""Shared by the pretraining tests."""

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
