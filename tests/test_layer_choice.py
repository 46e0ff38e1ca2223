"""The layer choice: its checks (with their messages), the coefficients of each choice, and the
selection of layers by them."""
import numpy as np
import pytest

from spacy_elmo.errors import ConfigError
from spacy_elmo.layer_choice import check_layer_choice, layer_coefficients, select_layers


@pytest.mark.parametrize("layer", [0, 2, "top", "average", "mix"])
def test_valid_choices_pass(layer):
    weights = [0.0, 1.0, 2.0] if layer == "mix" else None
    assert check_layer_choice(layer, weights, 1.0) is None


def test_all_is_a_choice_only_where_allowed():
    check_layer_choice("all", allow_all=True)
    with pytest.raises(ConfigError, match=r"^unknown 'layer' 'all'; use an index or one of \('top', 'average', 'mix'\)$"):
        check_layer_choice("all")


@pytest.mark.parametrize("layer", [True, 1.0, None, [0]])
def test_a_choice_must_be_an_index_or_a_name(layer):
    message = f"'layers' must be an index or one of ('all', 'top', 'average', 'mix'), got {layer!r}"
    with pytest.raises(ConfigError) as error:
        check_layer_choice(layer, allow_all=True, name="layers")
    assert str(error.value) == message


def test_a_negative_index_is_refused_with_a_hint():
    with pytest.raises(ConfigError) as error:
        check_layer_choice(-1)
    assert str(error.value) == "'layer' index must be 0 or more (use \"top\" for the last layer), got -1"


def test_an_unknown_name_is_named():
    with pytest.raises(ConfigError, match=r"unknown 'layer' 'bottom'"):
        check_layer_choice("bottom")


def test_mix_weights_need_the_mix():
    with pytest.raises(ConfigError) as error:
        check_layer_choice("top", [0.0, 1.0])
    assert str(error.value) == "'mix_weights' is only used with layer = \"mix\", but layer = 'top'"


@pytest.mark.parametrize("gamma", [float("nan"), float("inf")])
def test_gamma_must_be_finite(gamma):
    with pytest.raises(ConfigError, match=r"'mix_gamma' must be finite"):
        check_layer_choice("mix", mix_gamma=gamma)


def test_mix_weights_must_be_finite():
    with pytest.raises(ConfigError, match=r"'mix_weights' must be finite, got \[0.0, nan\]"):
        check_layer_choice("mix", [0.0, float("nan")])


def test_an_index_is_one_hot():
    coefficients = layer_coefficients(1, 3)
    assert coefficients.dtype == np.float32
    np.testing.assert_array_equal(coefficients, [0.0, 1.0, 0.0])


def test_an_index_past_the_last_layer_is_refused():
    with pytest.raises(ConfigError) as error:
        layer_coefficients(3, 3)
    assert str(error.value) == "'layer' 3 is out of range: this biLM has layers 0..2"


def test_top_is_the_last_layer_and_average_is_equal_weights():
    np.testing.assert_array_equal(layer_coefficients("top", 3), [0.0, 0.0, 1.0])
    np.testing.assert_allclose(layer_coefficients("average", 4), [0.25] * 4)


def test_mix_is_gamma_times_softmax_of_the_weights():
    np.testing.assert_allclose(layer_coefficients("mix", 2, [0.0, np.log(3.0)], mix_gamma=2.0), [0.5, 1.5], rtol=1e-6)


def test_mix_without_weights_is_the_average_times_gamma():
    np.testing.assert_allclose(layer_coefficients("mix", 3, mix_gamma=3.0), [1.0, 1.0, 1.0], rtol=1e-6)


def test_mix_weights_must_match_the_layers():
    with pytest.raises(ConfigError) as error:
        layer_coefficients("mix", 3, [0.0, 1.0])
    assert str(error.value) == "'mix_weights' has 2 values but this biLM has 3 layers"


def test_all_has_no_coefficients():
    with pytest.raises(ConfigError, match="unknown 'layer' 'all'"):
        layer_coefficients("all", 3)


def test_select_layers_keeps_all_or_mixes():
    layers = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    assert select_layers(layers, None) is layers
    np.testing.assert_array_equal(select_layers(layers, layer_coefficients("top", 3)), layers[2])
    np.testing.assert_allclose(select_layers(layers, layer_coefficients("average", 3)), layers.mean(axis=0), rtol=1e-6)
