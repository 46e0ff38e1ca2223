"""`set_vector_hooks`: `.vector`, `.has_vector` and `.similarity()` of tokens, spans and docs read
`doc.tensor`, whitespace left out of means, cosine 0 against a zero vector."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc

from spacy_elmo.pipeline.vector_hooks import set_vector_hooks

VECTORS = np.array([[1.0, 0.0], [9.0, 9.0], [0.0, 3.0], [0.0, 0.0]], dtype=np.float32)


@pytest.fixture
def doc() -> Doc:
    nlp = spacy.blank("en")  # no static vectors: every vector below is the hooks'
    doc = Doc(nlp.vocab, words=["cat", "  ", "sat", "on"])
    assert [token.is_space for token in doc] == [False, True, False, False]
    set_vector_hooks(doc, VECTORS)
    return doc


def test_vectors_are_rows_of_the_tensor_and_means_leave_whitespace_out(doc):
    assert doc.tensor is VECTORS
    np.testing.assert_array_equal(doc[2].vector, [0.0, 3.0])
    np.testing.assert_array_equal(doc[0:3].vector, [0.5, 1.5])
    np.testing.assert_allclose(doc.vector, [1.0 / 3, 1.0], rtol=1e-6)
    assert doc.has_vector and doc[0:2].has_vector and doc[3].has_vector


def test_a_span_of_whitespace_alone_is_a_zero_vector(doc):
    vector = doc[1:2].vector
    assert vector.shape == (2,) and not vector.any()


def test_similarity_is_the_cosine_and_zero_against_a_zero_vector(doc):
    assert doc[0].similarity(doc[2]) == pytest.approx(0.0, abs=1e-7)
    assert doc[0].similarity(doc[0:3]) == pytest.approx(0.5 / np.sqrt(0.5**2 + 1.5**2), rel=1e-6)
    assert doc[2].similarity(doc) == pytest.approx(1.0 / np.sqrt((1 / 3) ** 2 + 1.0), rel=1e-6)
    assert doc[3].similarity(doc[0]) == 0.0  # "on" has a zero vector
    assert doc[1:2].similarity(doc) == 0.0
