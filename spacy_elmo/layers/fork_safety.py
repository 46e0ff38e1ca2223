"""Keep torch working in processes forked by `nlp.pipe(n_process=...)`.

A child forked after torch ran a parallel (OpenMP) region hangs at its next one; torch in
forked children therefore runs single-threaded (each worker process is one thread anyway).
"""
import os

_registered = False


def single_thread_torch_in_forked_children() -> None:
    """Register (once per process) a fork hook that sets torch's thread count to 1 in children."""
    global _registered
    if not _registered and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_single_thread)
        _registered = True


def _single_thread() -> None:
    import torch

    torch.set_num_threads(1)
