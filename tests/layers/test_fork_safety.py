"""`single_thread_torch_in_forked_children`: one fork hook per process, setting torch's thread
count to 1 in the child."""
import os

import pytest
import torch

from spacy_elmo.layers import fork_safety


def test_the_hook_is_registered_once_and_runs_only_in_children(monkeypatch):
    registered = []
    monkeypatch.setattr(fork_safety, "_registered", False)
    monkeypatch.setattr(os, "register_at_fork", lambda **hooks: registered.append(hooks))
    fork_safety.single_thread_torch_in_forked_children()
    fork_safety.single_thread_torch_in_forked_children()
    assert registered == [{"after_in_child": fork_safety._single_thread}]


def test_without_fork_hooks_nothing_is_registered(monkeypatch):
    monkeypatch.setattr(fork_safety, "_registered", False)
    monkeypatch.delattr(os, "register_at_fork")
    fork_safety.single_thread_torch_in_forked_children()
    assert fork_safety._registered is False


def test_the_child_hook_sets_one_torch_thread():
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        fork_safety._single_thread()
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_runs_torch_on_one_thread():
    fork_safety.single_thread_torch_in_forked_children()
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report its thread count and leave at once
            os.write(write, str(torch.get_num_threads()).encode())
            os._exit(0)
        os.close(write)
        reported = os.read(read, 16).decode()
        os.close(read)
        os.waitpid(pid, 0)
    finally:
        torch.set_num_threads(threads)
    assert reported == "1"
