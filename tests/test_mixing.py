"""The layer mix γ · softmax(w) · h: its coefficients, and their application to numpy arrays."""
import numpy as np
import pytest

from spacy_elmo.mixing import mix_coefficients, mix_layers, softmax


def test_softmax_sums_to_one_and_keeps_the_order():
    probabilities = softmax(np.array([0.0, 1.0, 2.0]))
    expected = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    np.testing.assert_allclose(probabilities, expected, rtol=1e-12)
    assert probabilities.sum() == pytest.approx(1.0)


def test_softmax_is_stable_for_large_weights():
    probabilities = softmax(np.array([1000.0, 1000.0, 0.0]))
    assert np.all(np.isfinite(probabilities))
    np.testing.assert_allclose(probabilities, [0.5, 0.5, 0.0], atol=1e-12)


def test_mix_coefficients_are_gamma_times_softmax_in_float32():
    coefficients = mix_coefficients([0.0, 0.0, np.log(2.0)], gamma=2.0)
    assert coefficients.dtype == np.float32
    np.testing.assert_allclose(coefficients, [0.5, 0.5, 1.0], rtol=1e-6)


def test_mix_coefficients_default_gamma_is_one():
    np.testing.assert_allclose(mix_coefficients([0.0, 0.0]), [0.5, 0.5])


def test_mix_layers_is_the_weighted_sum_over_the_first_axis():
    layers = np.arange(24, dtype=np.float32).reshape(3, 2, 4)
    coefficients = np.array([0.5, 0.25, 0.25], dtype=np.float32)
    mixed = mix_layers(coefficients, layers)
    assert mixed.shape == (2, 4) and mixed.dtype == np.float32
    np.testing.assert_allclose(mixed, 0.5 * layers[0] + 0.25 * layers[1] + 0.25 * layers[2], rtol=1e-6)


def test_one_hot_coefficients_return_that_layer_itself():
    layers = np.random.default_rng(0).standard_normal((3, 5, 2)).astype(np.float32)
    selected = mix_layers(np.array([0.0, 1.0, 0.0]), layers)
    assert np.shares_memory(selected, layers)
    np.testing.assert_array_equal(selected, layers[1])


def test_a_single_nonzero_coefficient_other_than_one_scales_the_layer():
    layers = np.ones((2, 3, 2), dtype=np.float32)
    np.testing.assert_allclose(mix_layers(np.array([0.0, 2.0]), layers), np.full((3, 2), 2.0))


def test_float64_layers_mix_to_float32():
    layers = np.ones((2, 3, 2), dtype=np.float64)
    mixed = mix_layers(np.array([0.5, 0.5]), layers)
    assert mixed.dtype == np.float32
    np.testing.assert_allclose(mixed, np.ones((3, 2)))
