"""Runtime "torch" (`torch_runtime.py`): the biLM's saved bytes (float16 where that is exact, else
float32; nothing for no biLM), their loading in the configured compute dtype, and which biLMs
may take gradients."""
import json
import struct

import pytest
import torch

from spacy_elmo.bilm import bilm_from_bytes
from spacy_elmo.bilm.quantization import Int8Unsupported, is_int8, to_compute_dtype
from spacy_elmo.errors import ConfigError
from spacy_elmo.layers.model_settings import ElmoModelSettings
from spacy_elmo.layers.torch_runtime import _deserialize, _serialize, set_trainable

from ..conftest import random_bilm


def storage_dtype(data: bytes) -> str:
    """The storage dtype in the header of safetensors bytes written by `bilm_to_bytes`."""
    (size,) = struct.unpack("<Q", data[:8])
    return json.loads(json.loads(data[8 : 8 + size])["__metadata__"]["config"])["storage_dtype"]


def half_exact_bilm():
    bilm = random_bilm()
    with torch.no_grad():
        for parameter in bilm.parameters():
            parameter.copy_(parameter.half().float())
    return bilm


def assert_same_weights(first, second):
    a, b = first.state_dict(), second.state_dict()
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].dtype == torch.float32 and torch.equal(a[name], b[name]), name


def test_weights_that_float16_keeps_exactly_are_saved_in_float16():
    bilm = half_exact_bilm()
    data = _serialize(bilm)
    assert storage_dtype(data) == "float16"
    assert_same_weights(bilm_from_bytes(data), bilm)


def test_other_weights_are_saved_in_float32_exactly():
    bilm = random_bilm()
    data = _serialize(bilm)
    assert storage_dtype(data) == "float32"
    assert len(data) > 1.8 * len(_serialize(half_exact_bilm()))
    assert_same_weights(bilm_from_bytes(data), bilm)


def test_no_biLM_is_saved_as_nothing_and_nothing_loads_as_no_biLM():
    assert _serialize(None) == b""
    assert _deserialize(None, b"", "cpu", settings=ElmoModelSettings()) is None


def test_loaded_bytes_are_placed_in_the_configured_compute_dtype():
    data = _serialize(random_bilm())
    placed = _deserialize(None, data, "cpu", settings=ElmoModelSettings(device="cpu", compute_dtype="bfloat16"))
    assert {p.dtype for p in placed.parameters()} == {torch.bfloat16} and not placed.training


def test_trainable_switches_gradients_and_an_int8_biLM_refuses_them():
    bilm = random_bilm()
    set_trainable(bilm, True)
    assert all(p.requires_grad for p in bilm.parameters())
    set_trainable(bilm, False)
    assert not any(p.requires_grad for p in bilm.parameters())
    try:
        int8 = to_compute_dtype(random_bilm(), "cpu", "int8")
    except Int8Unsupported as err:
        pytest.skip(f"no int8 here: {err}")
    assert is_int8(int8)
    set_trainable(int8, False)  # nothing to refuse
    with pytest.raises(ConfigError, match="^frozen = false fine-tunes the biLM, but an int8 biLM has no gradients"):
        set_trainable(int8, True)
