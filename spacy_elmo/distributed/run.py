"""`embed --engine ray`: input files through `embed_dataset` into a Parquet folder."""
import logging
import math
import os
import time
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Sequence

import ray
import ray.data
from ray.exceptions import RayError

from ..errors import SpacyElmoError
from .embed import embed_dataset
from .inputs import DEFAULT_BLOCK_ROWS, read_inputs
from .output import summarize


@contextmanager
def ray_session(address: Optional[str], workers: int, cpus_per_worker: float) -> Iterator[None]:
    """Ray for one run: the cluster at `address`, or a local Ray started for the run (with at
    least the CPUs the workers ask for, the workers' output kept in its log folder) and shut
    down after it. An already running Ray is used as is."""
    if ray.is_initialized():
        yield
        return
    if address is None:
        ray.init(num_cpus=max(os.cpu_count() or 1, math.ceil(workers * cpus_per_worker)), include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address)
    try:
        yield
    finally:
        ray.shutdown()


def embed_files(
    inputs: Sequence[str],
    output: str,
    *,
    address: Optional[str] = None,
    workers: int = 1,
    cpus_per_worker: float = 1,
    gpus_per_worker: float = 0,
    text_column: str = "text",
    block_rows: int = DEFAULT_BLOCK_ROWS,
    **embed_options: Any,
) -> Dict[str, Any]:
    """Embed every row of `inputs` into Parquet files under `output` (a new folder).

    block_rows (int): rows per block, the unit of work a worker takes (and of retry after a
        failure) and of the Parquet files written; fewer, larger blocks cost less overhead.
    embed_options: the keywords of `embed_dataset` (model, tokenize, layers, dtype, batch_size...).
    RETURNS (Dict[str, Any]): rows, tokens, seconds and the rows with a problem (source, line, problem).
    """
    if "://" not in output and os.path.exists(output):
        raise SpacyElmoError(f"the output folder {output} already exists; name a new folder")
    start = time.perf_counter()
    with ray_session(address, workers, cpus_per_worker), clear_errors():
        rows = read_inputs(inputs, text_column, block_rows)
        embedded = embed_dataset(
            rows, text_column="text", concurrency=workers, num_cpus=cpus_per_worker, num_gpus=gpus_per_worker, **embed_options
        )
        # Writing asks for no CPU: the workers may hold them all.
        embedded.write_parquet(output, mode="create", ray_remote_args={"num_cpus": 0})
    seconds = time.perf_counter() - start
    return {**summarize(output), "seconds": seconds, "output": output}


@contextmanager
def clear_errors() -> Iterator[None]:
    """Raise the package's own error, not the Ray exceptions wrapped around it, when a worker
    fails on the model or the input: the loader's (or reader's) message, once. Ray Data's error
    reports of the failure (its tracebacks) are held back, and let through when the error is
    not ours."""
    loggers = [logging.getLogger(name) for name in list(logging.root.manager.loggerDict) if name.split(".")[:2] == ["ray", "data"]]
    held = _HoldBack()
    for logger in loggers:
        logger.addFilter(held)
    context = ray.data.DataContext.get_current()
    original = context.raise_original_map_exception
    context.raise_original_map_exception = True  # keep the worker's exception, not only its text
    try:
        yield
    except Exception as err:  # noqa: BLE001  (looking inside Ray's wrappers)
        cause = own_error(err)
        if cause is not None:
            raise cause from None
        held.release()
        raise
    finally:
        for logger in loggers:
            logger.removeFilter(held)
        context.raise_original_map_exception = original


class _HoldBack(logging.Filter):
    """Keeps error records from the loggers it filters until `release`, which lets them through."""

    def __init__(self) -> None:
        super().__init__()
        self.records: List[logging.LogRecord] = []
        self.releasing = False

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR or self.releasing:
            return True
        self.records.append(record)
        return False

    def release(self) -> None:
        self.releasing = True
        for record in self.records:
            logging.getLogger(record.name).handle(record)


def own_error(err: BaseException) -> Optional[SpacyElmoError]:
    """The SpacyElmoError inside Ray's wrappers of a worker's failure, if any."""
    seen = set()
    stack = [err]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, SpacyElmoError) and not isinstance(current, RayError):
            return type(current)(str(current).splitlines()[0])  # without the retry advice Ray Data appends
        linked = (getattr(current, "cause", None), current.__cause__, current.__context__, *current.args)
        stack.extend(item for item in linked if isinstance(item, BaseException))
    return None
