"""The settings of an ELMo model block (`spacy-elmo.ElmoModel.v2`, and v1), validated when
created: the one home of their defaults (the registered functions' defaults are these fields;
those the rest of the package shares, the batch bounds, device, compute dtype and runtime,
are named in `runtime.py`)."""
from dataclasses import asdict, dataclass
from typing import Any, Dict, Optional

from ..errors import ConfigError
from ..registry_names import ELMO_MODEL
from ..runtime import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_COMPUTE_DTYPE,
    DEFAULT_DEVICE,
    DEFAULT_MAX_TOKENS,
    DEFAULT_RUNTIME,
    ONNX_RUNTIME_DEVICES,
    ONNX_RUNTIME_DTYPES,
    check_compute_dtype,
    check_device,
    check_runtime,
)
from .segments import check_context


@dataclass(frozen=True)
class ElmoModelSettings:
    """The settings of an ELMo model block, validated when created.

    bilm (Optional[str]): None for the bundled default, a bundled model's short name, a native
        model folder, or an original weights .hdf5 (with `options`).
    options (Optional[str]): the options.json of an original weights .hdf5.
    context (str): "auto" (sentences where boundaries are set, else the whole doc),
        "sentences", or "doc". Sequences longer than `window` are cut into windows.
    window (int): most tokens per biLM input.
    stride (int): step between overlapping windows (<= window).
    batch_size (int): most sequences per biLM forward pass.
    max_tokens (int): most padded token slots per forward pass, bounding memory.
    device (str): "auto" (follow spaCy's GPU setting), "cpu", "cuda", "cuda:N" or "mps".
    compute_dtype (str): "float32", "bfloat16", or "int8" (CPU only; weights quantized per
        output channel when loaded); outputs are float32. (`dtype` in v1.)
    runtime (str): "torch", or "onnxruntime": the biLM exported to ONNX when the model is
        initialized and run by ONNX Runtime on the CPU (float32 or int8, for inference); a
        saved pipeline then loads and runs without torch.
    keep_softmax (bool): keep the biLM's softmax (for perplexities; torch only); features do
        not need it, so by default it is dropped when the weights are read and not saved.
    """

    bilm: Optional[str] = None
    options: Optional[str] = None
    context: str = "auto"
    window: int = 128
    stride: int = 96
    batch_size: int = DEFAULT_BATCH_SIZE
    max_tokens: int = DEFAULT_MAX_TOKENS
    device: str = DEFAULT_DEVICE
    compute_dtype: str = DEFAULT_COMPUTE_DTYPE
    runtime: str = DEFAULT_RUNTIME
    keep_softmax: bool = False

    def __post_init__(self) -> None:
        for key in ("window", "stride", "batch_size", "max_tokens"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"elmo model: '{key}' must be a whole number, got {value!r}")
        check_context(self.context, self.window, self.stride)
        for key in ("batch_size", "max_tokens"):
            if getattr(self, key) < 1:
                raise ConfigError(f"elmo model: '{key}' must be at least 1, got {getattr(self, key)}")
        if str(self.bilm).lower().endswith(".onnx"):
            raise ConfigError(
                f"elmo model: bilm {self.bilm!r} is an ONNX graph; name the biLM itself (runtime \"onnxruntime\" "
                "exports it when the model is initialized, and a saved pipeline holds the graph)"
            )
        try:
            check_device(self.device, "'device'")
            object.__setattr__(self, "compute_dtype", check_compute_dtype(self.compute_dtype, "'compute_dtype'"))
            check_runtime(self.runtime, "'runtime'")
        except ConfigError as err:
            raise ConfigError(f"elmo model: {err}") from None
        if self.runtime == "onnxruntime":
            self._check_onnx_runtime()

    def _check_onnx_runtime(self) -> None:
        if self.compute_dtype not in ONNX_RUNTIME_DTYPES:
            choices = " or ".join(ONNX_RUNTIME_DTYPES)
            raise ConfigError(
                f"elmo model: runtime \"onnxruntime\" computes in {choices}, not {self.compute_dtype}; "
                f"set compute_dtype to {choices}, or runtime to \"torch\""
            )
        if self.device not in ONNX_RUNTIME_DEVICES:
            raise ConfigError(
                f"elmo model: runtime \"onnxruntime\" runs on the CPU, not on {self.device!r}; "
                "set device to \"cpu\" (or \"auto\"), or runtime to \"torch\""
            )
        if self.keep_softmax:
            raise ConfigError(
                "elmo model: keep_softmax keeps the biLM's softmax for perplexities, which runtime \"onnxruntime\" "
                "does not compute; set keep_softmax to false, or runtime to \"torch\""
            )

    def to_config(self) -> Dict[str, Any]:
        """The model block of a config with these settings."""
        return {"@architectures": ELMO_MODEL, **asdict(self)}
