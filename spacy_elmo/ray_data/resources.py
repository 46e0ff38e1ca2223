"""What an actor pool asks of Ray, and how torch uses what it gets."""
from typing import Any, Dict

from ..errors import SpacyElmoError


def actor_options(concurrency: int, num_cpus: float, num_gpus: float) -> Dict[str, Any]:
    """`map_batches` arguments for a fixed pool of `concurrency` actors.

    Ray Data restarts an actor whose process dies and runs its unfinished batches again (its
    defaults for actor pools: `max_restarts=-1`, `max_task_retries=-1`), so no row is lost;
    only finished batches reach the output, so none is written twice.
    """
    from ray.data import ActorPoolStrategy

    check_pool(concurrency, num_cpus, num_gpus)
    return {
        "compute": ActorPoolStrategy(size=concurrency),
        "num_cpus": num_cpus,
        "num_gpus": num_gpus,
    }


def check_pool(workers: int, cpus_per_worker: float, gpus_per_worker: float) -> None:
    """Refuse a pool that Ray cannot make: fewer than one worker, no CPU, a negative GPU count."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise SpacyElmoError(f"workers (concurrency) must be a whole number of at least 1, got {workers!r}")
    if cpus_per_worker <= 0 or gpus_per_worker < 0:
        raise SpacyElmoError(
            f"each worker needs some CPU and no negative GPU count, got cpus per worker {cpus_per_worker}, gpus per worker {gpus_per_worker}"
        )


def threads_for(num_cpus: float) -> int:
    """Torch threads for an actor holding `num_cpus` CPUs: one per whole CPU, at least one."""
    return max(1, int(num_cpus))
