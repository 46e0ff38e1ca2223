"""`ElmoModelSettings`, the model block's settings: whole numbers, bounds, ONNX graphs named as
the biLM refused on any runtime, the compute dtype's spellings, and the block it writes.

(The checks of runtime "onnxruntime" are in tests/onnx/test_pipeline_errors.py; those of
context/window/stride in test_segments.py.)"""
import dataclasses

import pytest

from spacy_elmo.errors import ConfigError
from spacy_elmo.layers.model_settings import ElmoModelSettings


@pytest.mark.parametrize("key", ["window", "stride", "batch_size", "max_tokens"])
@pytest.mark.parametrize("value", ["8", 8.0, True, None])
def test_sizes_must_be_whole_numbers(key, value):
    with pytest.raises(ConfigError, match=f"^elmo model: '{key}' must be a whole number, got {value!r}$"):
        ElmoModelSettings(**{key: value})


@pytest.mark.parametrize("key", ["batch_size", "max_tokens"])
def test_batch_bounds_must_be_at_least_one(key):
    with pytest.raises(ConfigError, match=f"^elmo model: '{key}' must be at least 1, got 0$"):
        ElmoModelSettings(**{key: 0})
    assert getattr(ElmoModelSettings(**{key: 1}), key) == 1


def test_an_onnx_graph_named_as_the_biLM_is_refused_on_torch_too():
    with pytest.raises(ConfigError, match=r"^elmo model: bilm 'out/BiLM.ONNX' is an ONNX graph; name the biLM itself"):
        ElmoModelSettings(bilm="out/BiLM.ONNX", runtime="torch")


def test_errors_of_the_shared_checks_carry_the_model_blocks_prefix_once():
    with pytest.raises(ConfigError) as err:
        ElmoModelSettings(device="tpu")
    assert str(err.value).startswith("elmo model: ") and str(err.value).count("elmo model") == 1
    assert "'device'" in str(err.value)


def test_compute_dtype_is_stored_in_its_canonical_spelling():
    assert ElmoModelSettings(compute_dtype="bf16").compute_dtype == "bfloat16"


def test_the_block_it_writes_makes_the_same_settings_again():
    settings = ElmoModelSettings(bilm="en_base", context="doc", window=16, stride=8, batch_size=4, max_tokens=64, compute_dtype="int8")
    block = settings.to_config()
    assert block["@architectures"] == "spacy-elmo.ElmoModel.v2"
    assert set(block) == {"@architectures", *(field.name for field in dataclasses.fields(ElmoModelSettings))}
    assert ElmoModelSettings(**{key: value for key, value in block.items() if key != "@architectures"}) == settings
