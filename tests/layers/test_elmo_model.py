"""The model block (`elmo_model.py`): a model on the configured runtime, `with_fixed_weights`
(always predicts, passes no gradient back), and `set_frozen`."""
from pathlib import Path

import numpy as np
import pytest
from spacy.tokens import Doc
from spacy.vocab import Vocab
from thinc.api import Model, PyTorchShim

from spacy_elmo.bilm import save_bilm
from spacy_elmo.errors import ConfigError
from spacy_elmo.layers.elmo_model import build_elmo_model, get_bilm, set_frozen, with_fixed_weights
from spacy_elmo.layers.model_settings import ElmoModelSettings

from ..conftest import random_bilm


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return save_bilm(random_bilm(), tmp_path_factory.mktemp("bilm") / "tiny")


def docs():
    return [Doc(Vocab(), words=["A", "cat", "sat", "."]), Doc(Vocab(), words=["Dogs"])]


def test_the_torch_runtime_is_a_pytorch_shim_and_fine_tunes_unless_frozen(folder):
    model = build_elmo_model(ElmoModelSettings(bilm=str(folder), device="cpu"))
    assert isinstance(model.shims[0], PyTorchShim) and get_bilm(model) is None
    model.initialize()
    set_frozen(model, False)
    assert all(p.requires_grad for p in get_bilm(model).parameters())
    set_frozen(model, True)
    assert not any(p.requires_grad for p in get_bilm(model).parameters())


def test_the_onnx_runtime_model_holds_an_onnx_shim():
    pytest.importorskip("onnxruntime")
    from spacy_elmo.layers.onnx_runtime import OnnxShim

    model = build_elmo_model(ElmoModelSettings(runtime="onnxruntime", compute_dtype="int8"))
    assert isinstance(model.shims[0], OnnxShim) and model.shims[0].compute_dtype == "int8"


def test_onnx_runtime_may_be_frozen_but_not_fine_tuned():
    model = Model("settings_only", lambda model, X, is_train: (X, None), attrs={"settings": ElmoModelSettings(runtime="onnxruntime")})
    set_frozen(model, True)  # nothing to do: the graph has no gradients
    with pytest.raises(ConfigError, match='^frozen = false fine-tunes the biLM, but runtime "onnxruntime" has no gradients'):
        set_frozen(model, False)


def test_fixed_weights_predict_the_inner_model_and_take_no_gradient(folder):
    inner = build_elmo_model(ElmoModelSettings(bilm=str(folder), device="cpu"))
    frozen = with_fixed_weights(inner)
    frozen.initialize()
    assert (frozen.get_dim("nO"), frozen.get_dim("n_layers")) == (inner.get_dim("nO"), inner.get_dim("n_layers")) == (16, 3)
    set_frozen(inner, False)  # even weights that could take gradients get none through the wrapper
    outputs, backprop = frozen.begin_update(docs())
    assert [o.shape for o in outputs] == [(3, 4, 16), (3, 1, 16)]
    for got, expected in zip(outputs, inner.predict(docs())):
        np.testing.assert_array_equal(got, expected)
    assert backprop([np.ones_like(o) for o in outputs]) == []
    assert all(p.grad is None for p in get_bilm(inner).parameters())
