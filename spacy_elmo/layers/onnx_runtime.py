"""The model block on runtime "onnxruntime": the biLM is exported to ONNX when the model is
initialized (torch is needed then; int8: quantized by ONNX Runtime) and run by `OnnxBiLM` on
the CPU. An `OnnxShim` holds the graph and saves its bytes with the model (no pickle), so a
saved pipeline loads and runs without torch. Segmentation, batches and the assembly per doc are
the torch runtime's (`bilm_runs.py`, `segments.py`)."""
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import srsly
from spacy.tokens import Doc
from thinc.api import Model
from thinc.shims import Shim
from thinc.types import Floats3d

from ..dependencies import require
from ..errors import ConfigError, SpacyElmoError
from ..onnx.interface import DEFAULT_OPSET, FORMAT_VERSION
from ..runtime import onnx_threads
from .bilm_runs import ensure_loaded, read_bilm, run_segments, set_sizes
from .no_backprop import no_backprop
from .segments import assemble

if TYPE_CHECKING:
    from .model_settings import ElmoModelSettings

# The start of the saved state: then one line of JSON (compute dtype, graph format, opset, writer),
# then the graph (graph format: `spacy_elmo.onnx.interface.FORMAT_VERSION`).
MAGIC = b"spacy-elmo ONNX biLM\n"


def build_onnx_model(settings: "ElmoModelSettings") -> Model[List[Doc], List[Floats3d]]:
    """The model with an empty `OnnxShim`; the graph is made at initialize, or loaded with the model."""
    require("onnxruntime", 'elmo model: runtime "onnxruntime"')
    return Model(
        "elmo_model",
        forward,
        init=init,
        shims=[OnnxShim(settings.compute_dtype)],
        dims={"nO": None, "n_layers": None},
        attrs={"settings": settings},
    )


def init(model: Model, X: Optional[List[Doc]] = None, Y: Optional[Any] = None) -> None:
    """Read the configured biLM with torch, export it to ONNX (int8: quantized) and run that."""
    for dependency in ("torch", "onnx"):
        require(dependency, 'elmo model: initializing a model on runtime "onnxruntime" (it exports the biLM to ONNX)')
    hold_bilm(model, read_bilm(model))


def hold_bilm(model: Model, bilm: Any) -> None:
    """Export `bilm` (a float32 torch biLM on the CPU) to ONNX in the model's compute dtype
    (int8: quantized) and run that graph in the model."""
    from ..onnx.export import export_onnx

    settings: "ElmoModelSettings" = model.attrs["settings"]
    with tempfile.TemporaryDirectory(prefix="spacy-elmo-") as folder:
        try:
            path = export_onnx(bilm, Path(folder) / "bilm.onnx", opset=DEFAULT_OPSET, int8=settings.compute_dtype == "int8")
        except SpacyElmoError as err:
            raise type(err)(f"elmo model: {err}") from err
        graph = path.read_bytes()
    hold_graph(model, graph, DEFAULT_OPSET)


def hold_graph(model: Model, graph: bytes, opset: int) -> None:
    """Run `graph` (the bytes of a biLM graph in the model's compute dtype, written with `opset`)
    in the model, and set the model's sizes from it."""
    from ..about import __version__

    settings: "ElmoModelSettings" = model.attrs["settings"]
    shim: OnnxShim = model.shims[0]
    header = {"compute_dtype": settings.compute_dtype, "format": FORMAT_VERSION, "opset": opset, "written_by": f"spacy-elmo {__version__}"}
    shim.hold(graph, header)
    set_sizes(model, shim.runner())


def forward(model: Model[List[Doc], List[Floats3d]], docs: List[Doc], is_train: bool) -> Tuple[List[Floats3d], Callable]:
    """All layers per doc, float32 (n_layers, len(doc), width), in the model's ops; no gradient."""
    ensure_loaded(model)
    runner = model.shims[0].runner()
    segments, outputs = run_segments(docs, model.attrs["settings"], runner.embed_batch)
    shape = (runner.n_layers, runner.output_dim)
    arrays = assemble(docs, segments, outputs, lambda n: np.zeros((shape[0], n, shape[1]), dtype=np.float32))
    return [model.ops.asarray3f(array) for array in arrays], no_backprop


def is_onnx_state(data: bytes) -> bool:
    """Whether a model's saved biLM state is an ONNX graph (saved with runtime "onnxruntime")."""
    return data.startswith(MAGIC)


class OnnxShim(Shim):
    """Holds the model's `OnnxBiLM` and the bytes of its graph, which it saves and loads with a
    header naming the graph's compute dtype, opset and writer. The graph runs on the CPU,
    whatever device the model's arrays are on.

    compute_dtype (str): what the model block asks for ("float32" or "int8"); a saved graph in
        another is refused.
    """

    def __init__(self, compute_dtype: str) -> None:
        super().__init__(None)
        self.compute_dtype = compute_dtype
        self.graph = b""
        self.header: Dict[str, Any] = {}

    def hold(self, graph: bytes, header: Dict[str, Any]) -> None:
        """Run `graph` (ONNX bytes) from now on; one clear error where ONNX Runtime cannot."""
        from ..onnx.runner import OnnxBiLM, OnnxGraphError, OutdatedGraphError

        try:
            runner = OnnxBiLM(graph, threads=onnx_threads())
        except OnnxGraphError as err:
            described = f"opset {header.get('opset')}, written by {header.get('written_by')}"
            # An outdated graph's error says what to do; another may need a newer ONNX Runtime.
            advice = "" if isinstance(err, OutdatedGraphError) else "; upgrade onnxruntime, or initialize and save the pipeline again with this one"
            raise type(err)(f"elmo model: the pipeline's ONNX graph ({described}) cannot run here: {err}{advice}") from None
        self._model, self.graph, self.header = runner, graph, header

    def runner(self) -> Any:
        """The `OnnxBiLM` (safe in processes forked by `nlp.pipe(n_process=N)`: it makes a session
        of its own there)."""
        return self._model

    def to_bytes(self) -> bytes:
        state = MAGIC + json.dumps(self.header, sort_keys=True).encode("utf8") + b"\n" + self.graph if self.graph else b""
        return srsly.msgpack_dumps({"config": {}, "state": state})

    def from_bytes(self, data: bytes) -> "OnnxShim":
        state: bytes = srsly.msgpack_loads(data)["state"]
        if not state:
            self._model, self.graph, self.header = None, b"", {}
            return self
        if not is_onnx_state(state):
            raise SpacyElmoError(
                "elmo model: runtime \"onnxruntime\", but the pipeline holds its biLM for runtime \"torch\"; load it "
                "with runtime \"torch\", as its config says, or initialize a model on runtime \"onnxruntime\" and save that"
            )
        # One copy of the graph (tens to hundreds of MB), not a copy of the state and then of the graph.
        end = state.index(b"\n", len(MAGIC))
        header, graph = json.loads(state[len(MAGIC) : end]), state[end + 1 :]
        if header.get("format") != FORMAT_VERSION:
            raise SpacyElmoError(
                f"elmo model: the pipeline's ONNX graph (written by {header.get('written_by')}) is not in graph format "
                f"{FORMAT_VERSION}, the one this spacy-elmo runs; switch the torch pipeline it was made from again with "
                "`python -m spacy_elmo set-runtime`, or initialize and save the pipeline again with this spacy-elmo"
            )
        if header.get("compute_dtype") != self.compute_dtype:
            raise ConfigError(
                f"elmo model: the pipeline's ONNX graph computes in {header.get('compute_dtype')}, but its model block "
                f"asks for {self.compute_dtype}; set compute_dtype to {header.get('compute_dtype')}, or initialize "
                f"the model again in {self.compute_dtype} (its graph is made when it is initialized)"
            )
        self.hold(graph, header)
        return self

    def copy(self) -> "OnnxShim":
        """A shim sharing this one's graph and session (ONNX Runtime runs one session from many threads)."""
        copied = OnnxShim(self.compute_dtype)
        copied._model, copied.graph, copied.header = self._model, self.graph, self.header
        return copied

    def to_device(self, device_type: str, device_id: int) -> None:
        """Nothing moves: the graph runs on the CPU, and `forward` hands its outputs to the model's ops."""

    def finish_update(self, optimizer: Any) -> None:
        """Nothing to update: the graph's weights are fixed."""
