"""Switch a saved pipeline's `elmo` component to another runtime or compute dtype
(`python -m spacy_elmo set-runtime`): a copy whose biLM runs on torch or ONNX Runtime, in
float32 or int8, every other component unchanged.

A saved biLM state belongs to one runtime (torch: the bundled model's name and hash, or
safetensors bytes; ONNX Runtime: a graph in one compute dtype), so a new runtime needs a new
state. The copy is built from the pipeline's own config, upgraded to `spacy-elmo.ElmoModel.v2`
(`upgrade_config`), with the model block's `runtime` and `compute_dtype` set; the vocab, the
tokenizer, the meta and every other component are copied byte for byte from the loaded
pipeline; the `elmo` component gets its biLM:

- torch -> ONNX Runtime: the pipeline's own torch biLM (loaded in float32, so a fine-tuned or
  moved biLM is the one exported), exported (int8: quantized by ONNX Runtime);
- ONNX Runtime float32 -> int8: the graph quantized, as `export_onnx(..., int8=True)` does;
- ONNX Runtime -> torch, or int8 -> float32: the float32 weights are not in a graph; they are
  read from the model block's `bilm` (the bundled model, or the folder named) and used only
  where they give the pipeline's graph (float32: the same outputs to 1e-4; int8: the same graph
  again), else refused in one line;
- torch -> torch: the saved state, placed in the new compute dtype when loaded.

Listeners stay linked, and their sizes are checked against the biLM's.
"""
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from spacy.language import Language

from ..dependencies import require
from ..errors import ConfigError, SpacyElmoError
from ..paths import PathLike, staged_output
from ..registry_names import ELMO_FACTORY, ELMO_MODEL, ELMO_MODEL_V1
from ..runtime import DEFAULT_COMPUTE_DTYPE, DEFAULT_RUNTIME, ONNX_RUNTIME_DEVICES, check_compute_dtype, check_runtime

# The text the new biLM state is compared with the old one on (several sentences, one batch).
CHECK_SENTENCES = [
    ["The", "model", "was", "moved", "to", "another", "runtime", "."],
    ["We", "saw", "a", "play", "."],
    ["Let", "us", "play", "chess", ",", "then", "read", "."],
]
# The largest difference of a recovered biLM (or its graph) to the pipeline's graph.
RECOVERED_ATOL = 1e-4


class BiLMNotRecoverable(SpacyElmoError):
    """The torch weights of a pipeline's ONNX graph cannot be read, or are not the graph's."""


@dataclass(frozen=True)
class ElmoState:
    """Where an elmo component's biLM runs, as the saved config says."""

    name: str
    architecture: str
    runtime: str
    compute_dtype: str
    block: Dict[str, Any] = field(default_factory=dict, compare=False)  # the model block, interpolated

    @property
    def dtype_key(self) -> str:
        """The model block's key of the compute dtype: `dtype` in v1, `compute_dtype` in v2."""
        return "dtype" if self.architecture == ELMO_MODEL_V1 else "compute_dtype"

    @property
    def label(self) -> str:
        return f"{self.runtime} {self.compute_dtype}"


@dataclass
class SwitchedComponent:
    """What happened to one elmo component: its runtime and dtype before and after, the other
    settings changed, and how its features compare with the pipeline's on a check text
    (`reference`: the pipeline loaded in float32 where it runs on torch, else its graph)."""

    name: str
    before: str
    after: str
    reference: str
    notes: List[str] = field(default_factory=list)
    max_abs_difference: float = 0.0
    layer_cosines: List[float] = field(default_factory=list)


@dataclass
class RuntimeSwitch:
    """The result of `set_runtime`: where the copy is, and what changed in it."""

    output: Path
    components: List[SwitchedComponent]
    upgraded: List[str]


def elmo_states(pipeline: PathLike) -> List[ElmoState]:
    """The elmo components of a saved pipeline (its config.cfg) and where their biLM runs."""
    from spacy.util import load_config

    path = Path(pipeline)
    if not (path / "config.cfg").is_file():
        raise SpacyElmoError(f"{path} is not a saved spaCy pipeline (no config.cfg in it)")
    try:
        config = load_config(path / "config.cfg", interpolate=True)
    except Exception as err:  # confection raises several types for unreadable text
        raise SpacyElmoError(f"{path / 'config.cfg'}: cannot read it: {' '.join(str(err).split())}") from None
    states = []
    for name, component in config.get("components", {}).items():
        if component.get("factory") != ELMO_FACTORY:
            continue
        block = component.get("model")
        architecture = block.get("@architectures") if isinstance(block, dict) else None
        if architecture not in (ELMO_MODEL, ELMO_MODEL_V1):
            raise SpacyElmoError(
                f"{path}: the elmo component '{name}' has no {ELMO_MODEL} (or v1) model block; "
                "rewrite its config with: python -m spacy_elmo upgrade-config"
            )
        # A setting the block leaves out has the model's default; v1 runs on torch alone.
        runtime = block.get("runtime", DEFAULT_RUNTIME) if architecture == ELMO_MODEL else "torch"
        dtype = block.get("dtype" if architecture == ELMO_MODEL_V1 else "compute_dtype", DEFAULT_COMPUTE_DTYPE)
        states.append(ElmoState(name, architecture, runtime, check_compute_dtype(dtype), dict(block)))
    if not states:
        raise SpacyElmoError(f"{path} has no elmo component")
    return states


def switch_runtime(
    pipeline: PathLike, runtime: str, compute_dtype: str = DEFAULT_COMPUTE_DTYPE
) -> Tuple[Language, List[SwitchedComponent], List[str]]:
    """A copy of the saved `pipeline` whose elmo components run on `runtime` ("torch" or
    "onnxruntime") in `compute_dtype`, every other component unchanged (see the module).

    RETURNS (Tuple[Language, List[SwitchedComponent], List[str]]): the pipeline, what happened
        to each elmo component, and the model blocks upgraded from v1.
    """
    import spacy
    from spacy.util import load_model_from_config

    from ..layers.model_settings import ElmoModelSettings

    try:
        runtime = check_runtime(runtime, "runtime")
        compute_dtype = check_compute_dtype(compute_dtype, "compute dtype")
        ElmoModelSettings(runtime=runtime, compute_dtype=compute_dtype)
    except ConfigError as err:
        raise ConfigError(str(err).replace("elmo model: ", "")) from None
    require("onnxruntime" if runtime == "onnxruntime" else "torch", f'set-runtime to runtime "{runtime}"')
    path = Path(pipeline)
    states = elmo_states(path)
    if any(state.runtime == "onnxruntime" for state in states):
        require("onnxruntime", "set-runtime of a pipeline on runtime \"onnxruntime\"")
    # A torch biLM is loaded in float32 on the CPU: the weights as saved, for any new dtype or graph.
    overrides: Dict[str, Any] = {}
    for state in states:
        if state.runtime == "torch":
            overrides[f"components.{state.name}.model.{state.dtype_key}"] = "float32"
            overrides[f"components.{state.name}.model.device"] = "cpu"
    source = spacy.load(path, config=overrides)
    config, upgraded, notes = _new_config(path, source, states, runtime, compute_dtype)
    names = [state.name for state in states]
    nlp = load_model_from_config(config, meta=source.meta)
    nlp.from_bytes(source.to_bytes(exclude=names), exclude=[*names, "config.cfg"])
    switched = []
    for state in states:
        old, new = source.get_pipe(state.name), nlp.get_pipe(state.name)
        reference = _move_bilm(old, new, state, runtime, compute_dtype)
        _check_listeners(old, new)
        difference, cosines = _compare(old, new)
        after = f"{runtime} {compute_dtype}"
        switched.append(SwitchedComponent(state.name, state.label, after, reference, notes[state.name], difference, cosines))
    return nlp, switched, upgraded


def set_runtime(
    pipeline: PathLike, output: PathLike, runtime: str, compute_dtype: str = DEFAULT_COMPUTE_DTYPE, *, force: bool = False
) -> RuntimeSwitch:
    """Write a copy of the saved `pipeline` to `output` whose elmo components run on `runtime`
    in `compute_dtype` (`switch_runtime`); `force` replaces an existing pipeline at `output`.
    Nothing is left at `output` where it fails."""
    source, output = Path(pipeline), Path(output)
    _check_output(source, output, force)
    nlp, switched, upgraded = switch_runtime(source, runtime, compute_dtype)
    with staged_output(output) as staging:
        nlp.to_disk(staging)
    return RuntimeSwitch(output, switched, upgraded)


# --- the config -----------------------------------------------------------------------------


def _new_config(
    path: Path, source: Language, states: List[ElmoState], runtime: str, compute_dtype: str
) -> Tuple[Any, List[str], Dict[str, List[str]]]:
    """The saved config (its text, variables kept), v1 model blocks upgraded, each elmo model
    block on the new runtime and dtype; and the other settings that had to change, per component."""
    from thinc.api import Config

    from .config_upgrade import upgrade_config

    text, upgraded = upgrade_config((path / "config.cfg").read_text(encoding="utf8"))
    config = Config().from_str(text, interpolate=False)
    notes: Dict[str, List[str]] = {}
    for state in states:
        component, settings = config["components"][state.name], source.get_pipe(state.name).model.attrs["settings"]
        block = component["model"]
        block["runtime"], block["compute_dtype"] = runtime, compute_dtype
        notes[state.name] = changed = []
        if runtime != "onnxruntime":
            continue
        pinned = _bundled_name(source.get_pipe(state.name).bilm, settings)
        if pinned is not None:  # so that the graph's weights can be found again (set-runtime back to torch)
            block["bilm"] = pinned
            changed.append(f"bilm {settings.bilm!r} -> {pinned!r} (the bundled biLM the pipeline holds)")
        device = str(state.block.get("device", "auto"))  # as saved: the pipeline was loaded on the CPU
        if device not in ONNX_RUNTIME_DEVICES:
            block["device"] = "cpu"
            changed.append(f"device {device!r} -> 'cpu' (ONNX Runtime runs on the CPU)")
        if settings.keep_softmax:
            block["keep_softmax"] = False
            changed.append("keep_softmax true -> false (ONNX Runtime computes no perplexities)")
        if not source.get_pipe(state.name).frozen:
            component["frozen"] = True
            changed.append("frozen false -> true (ONNX Runtime has no gradients; the fine-tuned biLM is exported)")
    return config, upgraded, notes


def _bundled_name(bilm: Any, settings: Any) -> Optional[str]:
    """The name of the bundled biLM a torch pipeline holds by reference, where its `bilm`
    setting now names another (a pipeline saved with an earlier default), else None."""
    from ..layers.bundled_reference import MAGIC, bundled_folder, reference_bytes

    if bilm is None or not hasattr(bilm, "state_dict"):
        return None
    reference = reference_bytes(bilm)
    if reference is None:
        return None
    name = json.loads(reference[len(MAGIC) :].decode("utf8"))["name"]
    folder = bundled_folder(settings.bilm)
    return None if folder is not None and folder.name == name else name


# --- the biLM -------------------------------------------------------------------------------


def _move_bilm(old: Any, new: Any, state: ElmoState, runtime: str, compute_dtype: str) -> str:
    """Give the new component its biLM on the new runtime; what its features are compared with."""
    from ..layers.onnx_runtime import hold_bilm, hold_graph

    if state.runtime == runtime and (runtime == "torch" or state.compute_dtype == compute_dtype):
        new.from_bytes(old.to_bytes(exclude=["vocab"]), exclude=["vocab"])
        return "the pipeline's biLM" + (" in float32" if runtime == "torch" else "")
    if state.runtime == "torch":  # -> onnxruntime
        for dependency in ("torch", "onnx"):
            require(dependency, 'set-runtime from runtime "torch" to "onnxruntime" (it exports the biLM)')
        hold_bilm(new.model, old.bilm)
        new._attach()
        return "the pipeline's biLM on torch in float32"
    shim = old.model.shims[0]
    if runtime == "onnxruntime" and compute_dtype == "int8":  # float32 graph -> int8 graph
        hold_graph(new.model, _quantized(shim.graph), shim.header.get("opset"))
        new._attach()
        return "the pipeline's float32 graph"
    bilm = recover_bilm(old, state)
    if runtime == "onnxruntime":  # int8 graph -> float32 graph
        hold_bilm(new.model, bilm)
        new._attach()
    else:
        new.initialize()
    return f"the pipeline's {state.compute_dtype} graph"


def recover_bilm(component: Any, state: ElmoState) -> Any:
    """The float32 torch biLM an elmo component's ONNX graph was made from, read from its model
    block's `bilm` (and `options`); a `BiLMNotRecoverable` where it cannot be read or does not
    give the graph."""
    require("torch", f"elmo component '{state.name}': recovering the torch weights of its ONNX graph")
    from ..bilm import load_bilm

    settings, runner = component.model.attrs["settings"], component.bilm
    where = f"its bilm setting {settings.bilm!r}" if settings.bilm is not None else "its bilm setting (the default bundled biLM)"
    advice = "switch the torch pipeline the graph was made from instead"
    try:
        bilm = load_bilm(settings.bilm, options=settings.options, device="cpu")
    except (SpacyElmoError, OSError) as err:
        reason = " ".join(str(err).split())
        raise BiLMNotRecoverable(
            f"elmo component '{state.name}' holds an ONNX graph, and the torch weights it was made from cannot be read "
            f"from {where}: {reason}; {advice}"
        ) from None
    bilm.drop_softmax()
    got = runner.embed_sentences(CHECK_SENTENCES)
    if state.compute_dtype == "int8":
        expected = _int8_graph(bilm).embed_sentences(CHECK_SENTENCES)
    else:
        expected = bilm.embed_sentences(CHECK_SENTENCES)
    shapes_match = all(e.shape == g.shape for e, g in zip(expected, got))
    difference = max(float(np.abs(e - g).max()) for e, g in zip(expected, got)) if shapes_match else float("inf")
    if difference > RECOVERED_ATOL:
        shown = "other sizes" if not shapes_match else f"outputs up to {difference:.2g} apart"
        raise BiLMNotRecoverable(
            f"elmo component '{state.name}' holds an ONNX graph that was not made from the biLM {where} names "
            f"({shown}; a fine-tuned or replaced biLM?), so its torch weights cannot be recovered; {advice}"
        )
    return bilm


def _quantized(graph: bytes) -> bytes:
    """The int8 copy of a float32 biLM graph (ONNX Runtime's dynamic quantization)."""
    from ..onnx.quantization import quantize_onnx

    with tempfile.TemporaryDirectory(prefix="spacy-elmo-") as folder:
        source = Path(folder) / "float32.onnx"
        source.write_bytes(graph)
        return quantize_onnx(source, Path(folder) / "int8.onnx").read_bytes()


def _int8_graph(bilm: Any) -> Any:
    """The int8 graph of a float32 torch biLM, on ONNX Runtime."""
    require("onnx", "recovering the torch weights of an int8 ONNX graph (it exports them again)")
    from ..onnx.export import export_onnx
    from ..onnx.runner import OnnxBiLM

    with tempfile.TemporaryDirectory(prefix="spacy-elmo-") as folder:
        return OnnxBiLM(export_onnx(bilm, Path(folder) / "int8.onnx", int8=True).read_bytes(), threads=1)


# --- checks ---------------------------------------------------------------------------------


def _check_listeners(old: Any, new: Any) -> None:
    """The same components listen as before, each sized for the new biLM."""
    if sorted(new.listening_components) != sorted(old.listening_components):
        raise SpacyElmoError(
            f"elmo component '{new.name}': {', '.join(old.listening_components) or 'no component'} listened to it, "
            f"but {', '.join(new.listening_components) or 'none'} does in the copy"
        )
    for listener in new.listeners:
        for dim in ("nO", "n_layers"):
            if listener.maybe_get_dim(dim) != new.model.get_dim(dim):
                raise SpacyElmoError(
                    f"elmo component '{new.name}': a listener has {dim} = {listener.maybe_get_dim(dim)}, "
                    f"but the biLM on the new runtime has {new.model.get_dim(dim)}"
                )


def _compare(old: Any, new: Any) -> Tuple[float, List[float]]:
    """The largest difference of the new model's layers to the old one's on the check text, and
    the mean cosine per layer."""
    from spacy.tokens import Doc
    from spacy.vocab import Vocab

    from ..onnx.quantization import layer_cosines

    # A vocab of its own: the pipeline's strings stay as they were.
    doc = Doc(Vocab(), words=[word for words in CHECK_SENTENCES for word in words])
    expected = np.asarray(old.model.ops.to_numpy(old.model.predict([doc])[0]))
    got = np.asarray(new.model.ops.to_numpy(new.model.predict([doc])[0]))
    return float(np.abs(expected - got).max()), layer_cosines([expected], [got])


def _check_output(source: Path, output: Path, force: bool) -> None:
    if output.exists() and not force:
        raise SpacyElmoError(f"{output} exists; pass --force to replace it")
    resolved = output.resolve()
    if resolved == source.resolve() or resolved in source.resolve().parents:
        raise SpacyElmoError(f"{output} holds the pipeline {source}; write the copy to another folder")
    if output.is_dir() and any(output.iterdir()) and not (output / "config.cfg").is_file():
        raise SpacyElmoError(f"{output} is a folder but not a spaCy pipeline; --force replaces only a pipeline")
