"""Where a model runs, on which library, in which number type and in which batches: the device,
runtime and dtype names that every part of the package accepts, and the default bounds of a
forward pass.

Validation here needs no torch (spaCy imports the factories at start-up); `torch_device`
and `torch_dtype` import it when a model is really placed.
"""
import re
from typing import Any, Optional, Sequence

from .errors import ConfigError

# The bounds of one forward pass wherever none is given (`BiLM.embed_sentences`, the pipeline's
# model, the `embed` command): most sentences, and most padded token slots.
DEFAULT_BATCH_SIZE = 64
DEFAULT_MAX_TOKENS = 4096
# The most memory a biLM's cache of token embeddings holds (torch and ONNX Runtime alike).
DEFAULT_CACHE_BYTES = 64 * 2**20
# Where, on what and in what a pipeline's biLM runs when its model block does not say
# (`ElmoModelSettings`, and the blocks of saved configs that `set-runtime` reads).
DEFAULT_DEVICE = "auto"
DEFAULT_COMPUTE_DTYPE = "float32"
DEFAULT_RUNTIME = "torch"
DEVICE_PATTERN = re.compile(r"auto|cpu|cuda(:\d+)?|mps")
# compute_dtype: the type a biLM computes in, by name and short name (outputs are float32).
# "int8" is for inference on the CPU only (products in int8, the rest float32;
# `bilm/quantization.py`).
COMPUTE_DTYPES = {"float32": "float32", "fp32": "float32", "bfloat16": "bfloat16", "bf16": "bfloat16", "int8": "int8"}
# storage_dtype: the type weights or vectors are written in; "float16-softmax" stores only a
# model's softmax in float16. Vectors (numpy) take the first two.
STORAGE_DTYPES = ("float32", "float16", "bfloat16", "float16-softmax")
VECTOR_STORAGE_DTYPES = STORAGE_DTYPES[:2]
# runtime: the library a pipeline's biLM runs on. torch: any device and compute dtype, and
# fine-tuning; onnxruntime: inference on the CPU in float32 or int8 (`spacy_elmo.onnx`), and a
# saved pipeline loads and runs without torch.
RUNTIMES = ("torch", "onnxruntime")
ONNX_RUNTIME_DTYPES = ("float32", "int8")
ONNX_RUNTIME_DEVICES = ("auto", "cpu")


# How OpenMP threads wait, per command of `python -m spacy_elmo` (read when torch loads).
# `pretrain` owns its cores for hours: spinning threads (ACTIVE) trained 1,751 against 1,210
# tokens/s in one measurement, within the noise in another (docs/pretraining.md). Every
# other command runs beside other work (a pipeline, a server): sleeping threads (PASSIVE) keep 2
# threads near 1 thread's speed beside a busy process, where spinning ones made `nlp.pipe`
# slower than 1 thread (docs/performance.md).
OMP_WAIT_POLICIES = {"pretrain": "ACTIVE"}
DEFAULT_OMP_WAIT_POLICY = "PASSIVE"


def omp_wait_policy(command: str) -> str:
    """The OMP_WAIT_POLICY for a command of `python -m spacy_elmo`."""
    return OMP_WAIT_POLICIES.get(command, DEFAULT_OMP_WAIT_POLICY)


def set_threads(threads: Optional[int] = None) -> int:
    """Set torch's CPU threads for this process (it has one count per process, shared by every
    model and thread in it) and return it. None keeps torch's choice, capped at the CPUs this
    process may run on (`taskset`, container cpusets, Ray actors), so that it does not start
    more threads than it has cores.
    """
    import os

    import torch

    if threads is not None and threads < 1:
        raise ConfigError(f"threads must be at least 1, got {threads}")
    if threads is None:
        available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        threads = min(torch.get_num_threads(), available)
    torch.set_num_threads(threads)
    return threads


def onnx_threads() -> int:
    """ONNX Runtime's intra-op threads for a pipeline's biLM: OMP_NUM_THREADS where it is set (the
    count that bounds torch too), else 0, ONNX Runtime's default (one per physical core)."""
    import os

    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else 0


def check_device(device: Any, what: str = "device") -> str:
    """`device` if it names a device ("auto", "cpu", "cuda", "cuda:N", "mps"), else a ConfigError."""
    text = str(device)
    if not DEVICE_PATTERN.fullmatch(text):
        raise ConfigError(f"unknown {what} {device!r}; use auto, cpu, cuda, cuda:N or mps")
    return text


def check_compute_dtype(dtype: str, what: str = "compute dtype") -> str:
    """The canonical name ("float32", "bfloat16" or "int8") of a computation type or its short name."""
    if dtype not in COMPUTE_DTYPES:
        raise ConfigError(f"unknown {what} {dtype!r}; use one of {', '.join(COMPUTE_DTYPES)}")
    return COMPUTE_DTYPES[dtype]


def check_runtime(runtime: str, what: str = "runtime") -> str:
    """`runtime` if it is one of RUNTIMES, else a ConfigError naming them."""
    if runtime not in RUNTIMES:
        raise ConfigError(f"unknown {what} {runtime!r}; use one of {', '.join(RUNTIMES)}")
    return runtime


def check_storage_dtype(dtype: str, what: str = "storage dtype", choices: Sequence[str] = STORAGE_DTYPES) -> str:
    """`dtype` if it is one of the storage types `choices`, else a ConfigError naming them."""
    if dtype not in choices:
        raise ConfigError(f"unknown {what} {dtype!r}; use one of {', '.join(choices)}")
    return dtype


def torch_device(device: Any, auto: Optional[Any] = None) -> Any:
    """The torch.device that `device` names; "auto" is `auto` when given, else CUDA when present.

    auto (Optional[torch.device]): what "auto" means where the caller has its own rule (the
        pipeline follows spaCy's GPU setting).
    """
    import torch

    if isinstance(device, torch.device):
        target = device
    elif check_device(device) == "auto":
        target = auto if auto is not None else torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        target = torch.device(device)
    if target.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {str(device)!r} was asked for, but torch sees no CUDA GPU here")
    return target


def torch_dtype(dtype: str) -> Any:
    """The torch dtype of a float computation type name (int8 is no cast: `bilm.quantization`)."""
    import torch

    name = check_compute_dtype(dtype)
    if name == "int8":
        raise ConfigError("int8 is not a cast of the weights; place the model with spacy_elmo.bilm.quantization.to_compute_dtype")
    return getattr(torch, name)
