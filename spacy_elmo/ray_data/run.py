"""`embed --engine ray`: input files through `embed_dataset` into a Parquet folder.

What can be checked before Ray starts is checked first (the pool's size, the inputs, the
model's name or path, and, in `EmbedSettings`, the language and layer), so that a mistake is
one line within a second, not after Ray's start; a run that fails leaves no output folder.
"""
import logging
import math
import os
import shutil
import time
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Sequence

import ray
import ray.data
from ray.exceptions import RayError

from ..bilm.loading import check_model_source
from ..errors import SpacyElmoError
from ..embed.lines import nothing_to_embed
from ..embed.settings import EmbedSettings
from .embed import embed_dataset
from .inputs import DEFAULT_BLOCK_ROWS, expand_paths, read_inputs
from .output import summarize
from .resources import check_pool

# Ray's own lines that mean nothing to a user of `embed`: the token-authentication notice of a
# local Ray, and the core worker's error-level log (e.g. that actor arguments live in the
# object store). Each is left as the user set it where they set it.
QUIET_LOGGERS = ("ray._private.authentication.authentication_token_setup",)
QUIET_ENVIRONMENT = {"RAY_BACKEND_LOG_LEVEL": "fatal"}


@contextmanager
def ray_session(address: Optional[str], workers: int, cpus_per_worker: float) -> Iterator[None]:
    """Ray for one run: the cluster at `address`, or a local Ray started for the run (with at
    least the CPUs the workers ask for, the workers' output kept in its log folder) and shut
    down after it. An already running Ray is used as is."""
    if ray.is_initialized():
        yield
        return
    with _quiet():
        if address is None:
            ray.init(num_cpus=max(os.cpu_count() or 1, math.ceil(workers * cpus_per_worker)), include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address)
    try:
        yield
    finally:
        ray.shutdown()


@contextmanager
def _quiet() -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in QUIET_LOGGERS]
    levels = [logger.level for logger in loggers]
    added = {key: value for key, value in QUIET_ENVIRONMENT.items() if key not in os.environ}
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    os.environ.update(added)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)
        for key in added:
            os.environ.pop(key, None)


def embed_files(
    inputs: Sequence[str],
    output: str,
    settings: Optional[EmbedSettings] = None,
    *,
    address: Optional[str] = None,
    workers: int = 1,
    cpus_per_worker: float = 1,
    gpus_per_worker: float = 0,
    text_column: str = "text",
    block_rows: int = DEFAULT_BLOCK_ROWS,
) -> Dict[str, Any]:
    """Embed every row of `inputs` into Parquet files under `output` (a new folder).

    settings (Optional[EmbedSettings]): as for `embed_dataset` (default: the bundled biLM).
    block_rows (int): rows per block, the unit of work a worker takes (and of retry after a
        failure) and of the Parquet files written; fewer, larger blocks cost less overhead.
    RETURNS (Dict[str, Any]): rows, tokens, seconds and the rows with a problem (source, line, problem).
    """
    settings = settings or EmbedSettings()
    local_output = "://" not in output
    if local_output and os.path.exists(output):
        raise SpacyElmoError(f"the output folder {output} already exists; name a new folder")
    check_pool(workers, cpus_per_worker, gpus_per_worker)
    paths = expand_paths(inputs)
    if all(_is_empty_file(path) for path in paths):
        raise SpacyElmoError(nothing_to_embed(paths))
    check_model_source(settings.model.bilm)
    start = time.perf_counter()
    try:
        with ray_session(address, workers, cpus_per_worker), clear_errors():
            rows = read_inputs(paths, text_column, block_rows)
            if rows.count() == 0:
                raise SpacyElmoError(nothing_to_embed(paths))
            embedded = embed_dataset(
                rows, settings, text_column="text", concurrency=workers, num_cpus=cpus_per_worker, num_gpus=gpus_per_worker
            )
            # Writing asks for no CPU: the workers may hold them all.
            embedded.write_parquet(output, mode="create", ray_remote_args={"num_cpus": 0})
    except BaseException:
        if local_output:
            shutil.rmtree(output, ignore_errors=True)
        raise
    seconds = time.perf_counter() - start
    return {**summarize(output), "seconds": seconds, "output": output}


def _is_empty_file(path: str) -> bool:
    return "://" not in path and os.path.isfile(path) and os.path.getsize(path) == 0


@contextmanager
def clear_errors() -> Iterator[None]:
    """Raise the package's own error, not the Ray exceptions wrapped around it, when a worker
    fails on the model or the input: the loader's (or reader's) message, once. Ray Data's error
    reports of the failure (its tracebacks) are held back, and let through when the error is
    not ours."""
    loggers = [logging.getLogger(name) for name in list(logging.root.manager.loggerDict) if name.split(".")[:2] == ["ray", "data"]]
    # Ray Data's loggers made later (as each part of its executor is imported) reach the console
    # through the handlers of "ray.data": filter those too.
    consoles = [h for h in logging.getLogger("ray.data").handlers if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)]
    held = _HoldBack()
    for filtered in (*loggers, *consoles):
        filtered.addFilter(held)
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
        for filtered in (*loggers, *consoles):
            filtered.removeFilter(held)
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
        if not any(record is held for held in self.records):  # a logger's and its handlers' filter see it
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
