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

    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise SpacyElmoError(f"concurrency (workers) must be a whole number of at least 1, got {concurrency!r}")
    if num_cpus <= 0 or num_gpus < 0:
        raise SpacyElmoError(f"each worker needs some CPU and no negative GPU count, got num_cpus={num_cpus}, num_gpus={num_gpus}")
    return {
        "compute": ActorPoolStrategy(size=concurrency),
        "num_cpus": num_cpus,
        "num_gpus": num_gpus,
    }


def threads_for(num_cpus: float) -> int:
    """Torch threads for an actor holding `num_cpus` CPUs: one per whole CPU, at least one."""
    return max(1, int(num_cpus))
