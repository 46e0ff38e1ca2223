"""The `._.elmo` attributes: `token._.elmo` and `span._.elmo` from what `doc._.elmo` stores (all
layers with `doc._.elmo_layer_mix`, or the selected representation), whitespace left out."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, Span, Token

from spacy_elmo.pipeline.extensions import install_extensions

# Tokens 0 and 2 are words, token 1 whitespace.
WORDS = ["cat", "  ", "sat", "on"]


@pytest.fixture
def doc() -> Doc:
    install_extensions()
    doc = Doc(spacy.blank("en").vocab, words=WORDS)  # English lexical attributes: is_space
    assert [token.is_space for token in doc] == [False, True, False, False]
    return doc


def layers() -> np.ndarray:
    return np.arange(2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3)  # (n_layers, n_tokens, width)


def test_install_is_idempotent_and_registers_every_attribute():
    install_extensions()
    install_extensions()
    assert Doc.has_extension("elmo") and Doc.has_extension("elmo_layer_mix")
    assert Span.has_extension("elmo") and Token.has_extension("elmo")
    assert Doc.get_extension("elmo")[0] is None  # default: unset


def test_nothing_stored_gives_none_for_tokens_and_spans(doc):
    assert doc[0]._.elmo is None and doc[0:2]._.elmo is None


def test_the_selected_representation_is_read_by_row_and_spans_average_their_words(doc):
    selected = layers()[1]
    doc._.elmo = selected
    np.testing.assert_array_equal(doc[2]._.elmo, selected[2])
    np.testing.assert_array_equal(doc[0:3]._.elmo, (selected[0] + selected[2]) / 2)  # the whitespace token is left out


def test_all_layers_are_mixed_with_the_docs_coefficients(doc):
    stored = layers()
    doc._.elmo, doc._.elmo_layer_mix = stored, np.array([0.25, 0.5], np.float32)
    np.testing.assert_allclose(doc[3]._.elmo, 0.25 * stored[0, 3] + 0.5 * stored[1, 3], rtol=1e-6)
    expected = 0.25 * (stored[0, 0] + stored[0, 2]) / 2 + 0.5 * (stored[1, 0] + stored[1, 2]) / 2
    np.testing.assert_allclose(doc[0:3]._.elmo, expected, rtol=1e-6)
    doc._.elmo_layer_mix = np.array([0.0, 1.0], np.float32)  # one-hot: that layer itself
    np.testing.assert_array_equal(doc[1:4]._.elmo, stored[1, [2, 3]].mean(axis=0))


@pytest.mark.parametrize("all_layers", [True, False])
def test_a_span_of_whitespace_alone_is_zeros_of_the_width(doc, all_layers):
    doc._.elmo = layers() if all_layers else layers()[0]
    doc._.elmo_layer_mix = np.array([0.5, 0.5], np.float32)
    vector = doc[1:2]._.elmo
    assert vector.shape == (3,) and vector.dtype == np.float32 and not vector.any()
