"""`LayerMix`, the learned scalar mix γ · Σ_j softmax(w)_j · h_j: outputs and gradients."""
import numpy as np
import pytest

from spacy_elmo.layers.layer_mix import LayerMix


def mix_with(weights, gamma):
    model = LayerMix()
    model.initialize(X=[np.zeros((3, 1, 4), dtype=np.float32)])
    model.set_param("W", np.asarray(weights, dtype=np.float32))
    model.set_param("gamma", np.asarray([gamma], dtype=np.float32))
    return model


def test_layer_mix_forward_and_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    X = [rng.normal(size=(3, n, 4)).astype(np.float32) for n in (2, 0, 3)]
    dY = [rng.normal(size=(n, 4)).astype(np.float32) for n in (2, 0, 3)]
    weights, gamma = np.array([0.3, -0.2, 0.5]), 1.7
    model = mix_with(weights, gamma)
    Y, backprop = model.begin_update(X)
    s = np.exp(weights) / np.exp(weights).sum()
    for x, y in zip(X, Y):
        np.testing.assert_allclose(y, gamma * np.tensordot(s, x, axes=1), rtol=1e-5, atol=1e-6)
    dX = backprop(dY)

    def loss(w, g, xs):
        ys, _ = mix_with(w, g).begin_update(xs)
        return sum(float((y.astype(np.float64) * d).sum()) for y, d in zip(ys, dY))

    eps = 1e-3
    for j in range(3):
        step = np.eye(3)[j] * eps
        numeric = (loss(weights + step, gamma, X) - loss(weights - step, gamma, X)) / (2 * eps)
        assert model.get_grad("W")[j] == pytest.approx(numeric, rel=1e-2, abs=1e-3)
    numeric_gamma = (loss(weights, gamma + eps, X) - loss(weights, gamma - eps, X)) / (2 * eps)
    assert model.get_grad("gamma")[0] == pytest.approx(numeric_gamma, rel=1e-2, abs=1e-3)
    for x, d in zip(X, dX):
        assert d.shape == x.shape
    np.testing.assert_allclose(dX[2][1], gamma * s[1] * dY[2], rtol=1e-5, atol=1e-6)


def test_initialized_mix_is_the_plain_average_and_takes_its_layer_count_from_the_data():
    model = LayerMix()
    X = [np.arange(24, dtype=np.float32).reshape(4, 2, 3), np.ones((4, 1, 3), np.float32)]
    model.initialize(X=X)
    assert model.get_dim("n_layers") == 4
    np.testing.assert_array_equal(model.get_param("W"), np.zeros(4, np.float32))
    np.testing.assert_array_equal(model.get_param("gamma"), [1.0])
    Y = model.predict(X)
    assert [y.shape for y in Y] == [(2, 3), (1, 3)]
    np.testing.assert_allclose(Y[0], X[0].mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(Y[1], 1.0, rtol=1e-6)


def test_an_empty_batch_gives_no_outputs_and_no_gradients():
    model = mix_with([0.1, 0.2, 0.3], 2.0)
    Y, backprop = model.begin_update([])
    assert Y == [] and backprop([]) == []
