"""`load_onnx_bilm`: a biLM on ONNX Runtime, from a graph that `export_onnx` wrote (run without
torch) or from any biLM that `spacy_elmo.bilm.load_bilm` reads (exported first, as a model block
on runtime "onnxruntime" is: torch and the onnx package are needed then)."""
import tempfile
from pathlib import Path
from typing import Optional

from ..dependencies import require
from ..errors import ConfigError, SpacyElmoError
from ..paths import PathLike
from ..runtime import COMPUTE_DTYPES, ONNX_RUNTIME_DEVICES, ONNX_RUNTIME_DTYPES, onnx_threads
from .interface import CHECK_SENTENCE
from .quantization import layer_cosines
from .runner import OnnxBiLM, OnnxGraphError

# A biLM exported here is checked as `export-onnx` checks one: ONNX Runtime's layers against
# torch's on a test sentence; a layer whose mean cosine is below MIN_COSINE (int8 keeps 0.999,
# docs/performance.md) refuses the graph.
MIN_COSINE = 0.99


def load_onnx_bilm(
    source: Optional[PathLike] = None,
    *,
    options: Optional[PathLike] = None,
    device: str = "cpu",
    compute_dtype: Optional[str] = None,
    threads: Optional[int] = None,
) -> OnnxBiLM:
    """Load a biLM to run on ONNX Runtime's CPU provider.

    source (Optional[PathLike]): a ``.onnx`` graph written by `export_onnx` (run as it is,
        without torch), or anything `spacy_elmo.bilm.load_bilm` takes: exported to ONNX in memory
        and checked against torch on a test sentence.
    options (Optional[PathLike]): the ``options.json`` of original weights.
    device (str): "cpu" or "auto" (ONNX Runtime runs the biLM on the CPU).
    compute_dtype (Optional[str]): "float32" or "int8" (ONNX Runtime's dynamic quantization);
        None: float32, or the type an exported graph computes in.
    threads (Optional[int]): ONNX Runtime's intra-op threads; None: OMP_NUM_THREADS where it is
        set, else ONNX Runtime's default (one per physical core).
    RETURNS (OnnxBiLM): the biLM on ONNX Runtime.
    """
    if str(device) not in ONNX_RUNTIME_DEVICES:
        raise ConfigError(f'runtime "onnxruntime" runs on the CPU, not on {str(device)!r}; use device "cpu", or runtime "torch"')
    dtype = None if compute_dtype is None else COMPUTE_DTYPES.get(str(compute_dtype))
    if compute_dtype is not None and dtype not in ONNX_RUNTIME_DTYPES:
        choices = " or ".join(ONNX_RUNTIME_DTYPES)
        raise ConfigError(f'runtime "onnxruntime" computes in {choices}, not {compute_dtype!r}; use compute_dtype {choices}, or runtime "torch"')
    threads = onnx_threads() if threads is None else threads
    if isinstance(source, (str, Path)) and str(source).lower().endswith(".onnx"):
        return _load_graph(Path(source), options, dtype, threads)
    return _export(source, options, dtype == "int8", threads)


def _load_graph(path: Path, options: Optional[PathLike], dtype: Optional[str], threads: int) -> OnnxBiLM:
    """The graph at `path`, which must compute in `dtype` where one is asked for."""
    if options is not None:
        raise ConfigError(f"{path} is an ONNX graph, which holds its own architecture; options is only for original hdf5 weights")
    if not path.is_file():
        raise SpacyElmoError(f"{path}: no such file")
    bilm = OnnxBiLM(path, threads=threads)
    if dtype not in (None, bilm.compute_dtype):
        raise ConfigError(
            f"{path} is a graph in {bilm.compute_dtype}, not {dtype}; leave compute_dtype out to run it, or load "
            f"the biLM it was exported from with compute_dtype {dtype}"
        )
    return bilm


def _export(source: Optional[PathLike], options: Optional[PathLike], int8: bool, threads: int) -> OnnxBiLM:
    """The biLM at `source` exported to ONNX (`int8`: quantized) in memory, checked against torch."""
    for dependency in ("torch", "onnx"):
        require(dependency, 'load_bilm on runtime "onnxruntime" of a biLM that is not an .onnx graph (it exports the biLM)')
    from ..bilm import load_bilm
    from .export import export_onnx

    bilm = load_bilm(source, options=options)
    with tempfile.TemporaryDirectory(prefix="spacy-elmo-") as folder:
        graph = export_onnx(bilm, Path(folder) / "bilm.onnx", int8=int8).read_bytes()
    runner = OnnxBiLM(graph, threads=threads)
    cosines = layer_cosines(bilm.embed_sentences([CHECK_SENTENCE]), runner.embed_sentences([CHECK_SENTENCE]))
    if min(cosines) < MIN_COSINE:
        shown = ", ".join(f"{cosine:.4f}" for cosine in cosines)
        raise OnnxGraphError(
            f"the biLM exported to ONNX does not give torch's layers on a test sentence (mean cosine per layer {shown}, "
            f"below {MIN_COSINE}); load it with runtime \"torch\""
        )
    return runner
