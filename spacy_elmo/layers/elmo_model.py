"""`spacy-elmo.ElmoModel.v2` (and v1): docs in, every biLM layer per doc out.

The model owns the way from a Doc to its features: it cuts docs into the sequences the biLM
reads (`segments.py`), runs the biLM on them in length-sorted batches bounded by `batch_size`
and `max_tokens`, and puts the outputs back per doc (`bilm_runs.py`). The weights are read when
the model is initialized (or first used) from `bilm` (+ `options`); from then on they travel
with the model. The biLM runs on torch (`torch_runtime.py`: a torch module in a `PyTorchShim`,
saved as safetensors bytes) or on ONNX Runtime (`onnx_runtime.py`: an ONNX graph exported when
the model is initialized, saved as its bytes and run without torch).
"""
from typing import Any, Callable, List, Optional, Tuple

from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats3d

from ..errors import ConfigError
from .bilm_runs import LOADING, ensure_loaded, get_bilm
from .model_settings import ElmoModelSettings
from .no_backprop import no_backprop
from .onnx_runtime import build_onnx_model
from .torch_runtime import build_torch_model, set_trainable

__all__ = ["LOADING", "ElmoModelSettings", "build_elmo_model", "ensure_loaded", "get_bilm", "set_frozen", "with_fixed_weights"]


def build_elmo_model(settings: ElmoModelSettings) -> Model[List[Doc], List[Floats3d]]:
    """Create the model on the settings' runtime; the biLM is read at initialize (or first use).

    Dims `nO` (layer width) and `n_layers` are set once the weights are loaded.
    """
    build = build_onnx_model if settings.runtime == "onnxruntime" else build_torch_model
    return build(settings)


def with_fixed_weights(model: Model[List[Doc], List[Floats3d]]) -> Model[List[Doc], List[Floats3d]]:
    """`model` with its weights fixed: it always predicts, and passes no gradient back."""
    return Model("elmo_frozen", _frozen_forward, layers=[model], dims={"nO": None, "n_layers": None}, init=_frozen_init)


def set_frozen(model: Model, frozen: bool) -> None:
    """Fix the loaded biLM's weights, or free them for fine-tuning; a ConfigError where they
    cannot be trained (runtime "onnxruntime", int8)."""
    settings: ElmoModelSettings = model.attrs["settings"]
    if settings.runtime == "onnxruntime":
        if not frozen:
            raise ConfigError(
                "frozen = false fine-tunes the biLM, but runtime \"onnxruntime\" has no gradients; set the model's "
                "runtime to \"torch\", or keep frozen = true"
            )
        return
    set_trainable(get_bilm(model), not frozen)


def _frozen_init(model: Model, X: Optional[List[Doc]] = None, Y: Optional[Any] = None) -> None:
    inner = model.layers[0]
    inner.initialize(X=X)
    for dim in ("nO", "n_layers"):
        model.set_dim(dim, inner.get_dim(dim))


def _frozen_forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats3d], Callable]:
    return model.layers[0].predict(docs), no_backprop
