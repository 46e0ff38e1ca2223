"""The listener (`ElmoListener`): reading `doc._.elmo` or the batch its upstream handed over, the
fallbacks and their errors; and the listener tok2vec built on it (`spacy-elmo.ElmoListener.v1`,
`spacy_elmo/architectures.py`)."""
import numpy as np
import pytest
import spacy
from thinc.api import NumpyOps

from spacy_elmo.architectures import build_elmo_listener_v1
from spacy_elmo.layers.listener import ElmoListener
from spacy_elmo.pipeline.extensions import install_extensions


def test_listener_reads_docs_or_gives_zeros_and_fails_clearly():
    install_extensions()
    nlp = spacy.blank("en")
    annotated, bare = nlp("a b c"), nlp("d e")
    annotated._.elmo = np.ones((3, 3, 8), dtype=np.float32)
    listener = ElmoListener("*")
    with pytest.raises(ValueError, match="not in the pipeline before it"):
        listener.predict([bare])
    listener.component_name = "tagger"
    with pytest.raises(ValueError, match="of 'tagger': an elmo component did not annotate the doc"):
        listener.predict([bare])
    listener.initializing = True  # zeros only while the upstream is being initialized
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


def test_a_size_that_changes_is_one_error_naming_both_values_and_force_overrides_it():
    listener = ElmoListener("elmo")
    listener.set_dim("nO", 8)
    listener.set_dim("nO", 8)  # the same size again is no change
    with pytest.raises(ValueError, match="the biLM's nO is 8 on one side and 16 on the other"):
        listener.set_dim("nO", 16)
    assert listener.get_dim("nO") == 8
    listener.set_dim("nO", 16, force=True)
    assert listener.get_dim("nO") == 16


def test_training_uses_the_received_batch_and_its_callback_once_then_reads_the_docs():
    install_extensions()
    nlp = spacy.blank("en")
    doc = nlp("a b")
    doc._.elmo = np.zeros((3, 2, 8), dtype=np.float32)
    listener = ElmoListener("elmo")
    received, gradients = np.full((3, 2, 8), 2.0, np.float32), []
    listener.receive(ElmoListener.get_batch_id([doc]), [received], gradients.append)
    (output,), backprop = listener.begin_update([doc])
    np.testing.assert_array_equal(output, received)
    backprop(["dY"])
    assert gradients == [["dY"]]
    assert (listener._batch_id, listener._outputs, listener._backprop) == (None, None, None)
    (stored,), no_gradient = listener(([doc]), is_train=False)
    np.testing.assert_array_equal(stored, 0.0)
    assert no_gradient(["dY"]) == []


def test_the_batch_id_is_the_sum_of_the_token_orths():
    nlp = spacy.blank("en")
    docs = [nlp("a b"), nlp("c")]
    assert ElmoListener.get_batch_id(docs) == sum(token.orth for doc in docs for token in doc)
    assert ElmoListener.get_batch_id([]) == 0
