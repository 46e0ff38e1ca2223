"""Data-parallel training over processes started by torchrun (gloo on CPU, nccl on GPU)."""

import gc
import os
import sys
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, List

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from ..runtime import torch_device

COLLECTIVE_TIMEOUT = timedelta(hours=2)


@dataclass
class Processes:
    """This process's place among the training processes."""

    rank: int = 0
    world_size: int = 1
    device: torch.device = torch.device("cpu")

    @property
    def is_main(self) -> bool:
        """Only the main process writes checkpoints, models and logs."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def start_processes(device: str = "auto") -> Processes:
    """Join the process group when launched by torchrun (WORLD_SIZE > 1), else run alone.

    device (str): "auto" (a GPU per process when available), "cpu", "cuda" or "cuda:N" (alone).
    """
    target = torch_device(device)
    use_cuda = target.type == "cuda"
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size == 1:
        return Processes(device=target)
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if use_cuda:
        torch.cuda.set_device(local_rank)
    if not dist.is_initialized():
        # The other processes wait while the main one evaluates or writes a checkpoint.
        dist.init_process_group(backend="nccl" if use_cuda else "gloo", timeout=COLLECTIVE_TIMEOUT)
    return Processes(rank, world_size, torch.device("cuda", local_rank) if use_cuda else torch.device("cpu"))


def stop_processes(processes: Processes) -> None:
    """Leave the process group (called from `finally`: after an error, without waiting for the others)."""
    if processes.distributed and dist.is_initialized():
        gc.collect()  # a released DistributedDataParallel goes now, while the group still exists
        if sys.exc_info()[0] is None:
            # Leave together: a process that tears gloo down while another still uses it can abort at exit.
            dist.barrier()
        dist.destroy_process_group()


def wrap_model(model: nn.Module, processes: Processes) -> nn.Module:
    """DistributedDataParallel around `model` (which copies rank 0's weights to all), or `model`."""
    if not processes.distributed:
        return model
    device_ids = [processes.device.index] if processes.device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=device_ids)


def all_agree(flag: bool, processes: Processes) -> bool:
    """True only if `flag` is true in every process (so all stop at the same step)."""
    if not processes.distributed:
        return flag
    value = torch.tensor([1 if flag else 0], device=processes.device)
    dist.all_reduce(value, op=dist.ReduceOp.MIN)
    return bool(value.item())


def gather(obj: Any, processes: Processes) -> List[Any]:
    """Every process's `obj`, in rank order (tensors should be on the CPU)."""
    if not processes.distributed:
        return [obj]
    result: List[Any] = [None] * processes.world_size
    dist.all_gather_object(result, obj)
    return result


def broadcast(obj: Any, processes: Processes) -> Any:
    """The main process's `obj`, in every process."""
    if not processes.distributed:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]
