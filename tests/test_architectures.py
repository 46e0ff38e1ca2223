"""`spacy-elmo.ElmoEmbed.v1` (a tok2vec with a biLM of its own) and `spacy-elmo.ScalarMix.v1`,
on a stand-in for the ELMo model block; the listener tok2vec is tested in
tests/layers/test_listener.py, the model blocks in tests/pipeline/test_registration.py."""
import numpy as np
import pytest
import spacy
from spacy.ml.models import MultiHashEmbed
from spacy.util import registry
from thinc.api import Model

from spacy_elmo.architectures import FEATURES_REF, build_elmo_embed_v1, build_scalar_mix_v1
from spacy_elmo.registry_names import ELMO_EMBED, SCALAR_MIX

N_LAYERS, WIDTH = 3, 4


def fake_elmo():
    """Docs to (N_LAYERS, len(doc), WIDTH) layers made from the token lengths; records each backprop."""

    def forward(model, docs, is_train):
        layers = [
            np.stack([np.outer([len(t) for t in doc], np.arange(1, WIDTH + 1)) * (j + 1) for j in range(N_LAYERS)]).astype("f")
            for doc in docs
        ]
        return layers, lambda d_layers: model.attrs["backprops"].append(d_layers) or []

    return Model("fake_elmo", forward, dims={"nO": WIDTH, "n_layers": N_LAYERS}, attrs={"backprops": []})


@pytest.fixture(scope="module")
def docs():
    nlp = spacy.blank("en")
    return [nlp("a bb ccc"), nlp("dddd")]


def test_the_registered_names_are_these_functions():
    assert registry.architectures.get(ELMO_EMBED) is build_elmo_embed_v1
    assert registry.architectures.get(SCALAR_MIX) is build_scalar_mix_v1


def test_a_frozen_biLM_is_mixed_projected_and_gets_no_gradient(docs):
    elmo = fake_elmo()
    model = build_elmo_embed_v1(elmo, width=5)
    assert model.get_ref(FEATURES_REF).name == "elmo_frozen" and model.get_ref(FEATURES_REF).layers[0] is elmo
    model.initialize(X=docs)
    vectors, backprop = model.begin_update(docs)
    assert [v.shape for v in vectors] == [(3, 5), (1, 5)]
    backprop([np.ones_like(v) for v in vectors])
    assert elmo.attrs["backprops"] == []
    # the mix starts equal with γ = 1: the projection of the layers' mean
    projection = model.layers[-1].layers[0]
    mean = np.concatenate(elmo.predict(docs), axis=1).mean(axis=0)
    expected = mean @ projection.get_param("W").T + projection.get_param("b")
    np.testing.assert_allclose(np.concatenate(vectors), expected, rtol=1e-5, atol=1e-5)


def test_a_biLM_that_is_not_frozen_gets_the_gradient_of_its_layers(docs):
    elmo = fake_elmo()
    model = build_elmo_embed_v1(elmo, width=5, frozen_elmo=False)
    assert model.get_ref(FEATURES_REF) is elmo
    model.initialize(X=docs)
    vectors, backprop = model.begin_update(docs)
    backprop([np.ones_like(v) for v in vectors])
    (d_layers,) = elmo.attrs["backprops"]
    assert [d.shape for d in d_layers] == [(N_LAYERS, 3, WIDTH), (N_LAYERS, 1, WIDTH)]


def test_static_features_are_concatenated_before_the_projection(docs):
    static = MultiHashEmbed(width=6, attrs=["NORM"], rows=[50], include_static_vectors=False)
    model = build_elmo_embed_v1(fake_elmo(), width=5, static_embed=static)
    model.initialize(X=docs)
    assert model.get_dim("nO") == 5
    assert model.layers[-1].layers[0].get_param("W").shape == (5, WIDTH + 6)


def test_dropout_is_a_layer_only_when_asked_for(docs):
    names = [node.name for node in build_elmo_embed_v1(fake_elmo(), width=5, dropout=0.2).walk()]
    assert "dropout" in names
    assert "dropout" not in [node.name for node in build_elmo_embed_v1(fake_elmo(), width=5).walk()]


def test_scalar_mix_infers_the_layers_and_starts_with_the_mean():
    mix = build_scalar_mix_v1()
    layers = [np.arange(24, dtype="f").reshape(3, 2, 4), np.ones((3, 1, 4), dtype="f")]
    mix.initialize(X=layers)
    assert mix.get_dim("n_layers") == 3
    out = mix.predict(layers)
    np.testing.assert_allclose(out[0], layers[0].mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(out[1], np.ones((1, 4)), rtol=1e-6)
