"""The thinc layers: scalar mix gradients, listener fallbacks."""
import numpy as np
import pytest
import spacy
from thinc.api import NumpyOps

from spacy_elmo.architectures import build_elmo_listener_v1
from spacy_elmo.layers.listener import ElmoListener
from spacy_elmo.layers.layer_mix import LayerMix
from spacy_elmo.pipeline.extensions import install_extensions


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


def test_listener_reads_docs_or_gives_zeros_and_fails_clearly():
    install_extensions()
    nlp = spacy.blank("en")
    annotated, bare = nlp("a b c"), nlp("d e")
    annotated._.elmo = np.ones((3, 3, 8), dtype=np.float32)
    listener = ElmoListener("*")
    with pytest.raises(ValueError, match="has not loaded its weights"):
        listener.predict([bare])
    listener.set_dim("nO", 8)
    listener.set_dim("n_layers", 3)
    first, second = listener.predict([annotated, bare])
    np.testing.assert_array_equal(first, 1.0)
    assert second.shape == (3, 2, 8) and not second.any()
    with pytest.raises(ValueError, match="annotating_components"):
        listener.begin_update([bare])
    listener.receive(ElmoListener.get_batch_id([annotated]), [np.ones((3, 3, 8), np.float32)], lambda d: [])
    with pytest.raises(ValueError, match="other than the one"):
        listener.begin_update([bare])
    annotated._.elmo = np.ones((3, 8), dtype=np.float32)
    with pytest.raises(ValueError, match='store = "all"'):
        listener.predict([annotated])


def test_listener_tok2vec_gives_each_token_a_vector_of_its_own_features_at_width():
    install_extensions()
    rng = np.random.default_rng(0)
    docs = [spacy.blank("en")("a b c"), spacy.blank("en")("d")]
    for doc in docs:
        doc._.elmo = rng.normal(size=(3, len(doc), 8)).astype(np.float32)
    model = build_elmo_listener_v1(width=24)
    model.get_ref("elmo_features").set_dim("nO", 8)
    model.get_ref("elmo_features").set_dim("n_layers", 3)
    model.initialize(X=docs)
    before = model.predict(docs)
    assert [vectors.shape for vectors in before] == [(3, 24), (1, 24)]
    assert isinstance(model.ops, NumpyOps)
    docs[1]._.elmo = docs[1]._.elmo + 1.0
    after = model.predict(docs)
    np.testing.assert_array_equal(after[0], before[0])
    assert not np.allclose(after[1], before[1])


def test_listener_tok2vec_initializes_without_docs_from_the_listener_sizes_or_waits_for_the_bytes():
    # spacy-experimental's coref initializes its model without docs before deserializing it.
    from spacy.ml.models import MultiHashEmbed

    def static():
        return MultiHashEmbed(width=6, attrs=["NORM"], rows=[100], include_static_vectors=False)

    sized = build_elmo_listener_v1(width=4)
    sized.get_ref("elmo_features").set_dim("nO", 8)
    sized.get_ref("elmo_features").set_dim("n_layers", 3)
    sized.initialize()  # sizes from the listener
    assert sized.layers[-1].layers[0].get_param("W").shape == (4, 8)

    model = build_elmo_listener_v1(width=4, static_embed=static())
    model.initialize()  # sizes unknown: nothing to allocate, and no error
    assert not model.layers[-1].layers[0].has_param("W")
    install_extensions()
    docs = [spacy.blank("en")("a b")]
    docs[0]._.elmo = np.random.default_rng(0).normal(size=(3, 2, 8)).astype(np.float32)
    trained = build_elmo_listener_v1(width=4, static_embed=static())
    trained.get_ref("elmo_features").set_dim("nO", 8)
    trained.get_ref("elmo_features").set_dim("n_layers", 3)
    trained.initialize(X=docs)
    model.from_bytes(trained.to_bytes())
    np.testing.assert_allclose(model.predict(docs)[0], trained.predict(docs)[0])
    assert np.abs(trained.predict(docs)[0]).sum() > 0


def test_replace_listeners_config_swaps_every_listener_block_for_an_embed_block():
    from spacy_elmo.pipeline.component import _replace_listener_cfg

    model_block = {"@architectures": "spacy-elmo.ElmoModel.v1", "bilm": "en_small", "context": "auto"}
    static = {"@architectures": "spacy.MultiHashEmbed.v2", "width": 8}
    tok2vec = {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {"@architectures": "spacy-elmo.ElmoListener.v1", "width": 8, "upstream": "elmo", "static_embed": static},
        "encode": {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": 8},
    }
    rewritten = _replace_listener_cfg(model_block, tok2vec, frozen=False)
    assert rewritten["encode"] == tok2vec["encode"] and rewritten["@architectures"] == "spacy.Tok2Vec.v2"
    assert rewritten["embed"] == {
        "@architectures": "spacy-elmo.ElmoEmbed.v1",
        "width": 8,
        "static_embed": static,
        "frozen_elmo": False,
        "elmo": model_block,
    }
    assert tok2vec["embed"]["@architectures"] == "spacy-elmo.ElmoListener.v1"  # the input is left alone
