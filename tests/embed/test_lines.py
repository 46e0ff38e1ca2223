"""`LineEmbedder`, what both engines of `embed` run: the model card's language, spaCy's or
whitespace tokens, sentences, the settings' layer; and the engines' message for empty inputs."""
from pathlib import Path

import numpy as np
import pytest

from spacy_elmo.bilm import save_bilm
from spacy_elmo.bilm.model_info import write_model_info
from spacy_elmo.embed.lines import LineEmbedder, nothing_to_embed
from spacy_elmo.embed.settings import EmbedSettings
from spacy_elmo.layers.model_settings import ElmoModelSettings

from ..conftest import random_bilm


@pytest.fixture(scope="module")
def bilm():
    return random_bilm()


@pytest.fixture(scope="module")
def folder(tmp_path_factory, bilm) -> Path:
    """The tiny biLM (3 layers of 16), whose card says it is German."""
    path = save_bilm(bilm, tmp_path_factory.mktemp("bilm") / "tiny")
    write_model_info(path, {"lang": "de"})
    return path


def embedder(folder: Path, **settings) -> LineEmbedder:
    return LineEmbedder(EmbedSettings(model=ElmoModelSettings(bilm=str(folder), device="cpu"), **settings))


def test_lines_get_spacys_tokens_in_the_models_language_and_all_layers(folder, bilm):
    lines = embedder(folder)
    assert lines.nlp.lang == "de" and (lines.n_layers, lines.width) == (3, 16) and lines.coefficients is None
    (tokens, layers), (blank_tokens, blank) = lines(["Wir sahen z.B. nichts, oder?", ""])
    assert tokens == ["Wir", "sahen", "z.B.", "nichts", ",", "oder", "?"]  # English would split "z." "B."
    (expected,) = bilm.embed_sentences([tokens])
    assert layers.dtype == np.float32 and layers.shape == (3, 7, 16)
    np.testing.assert_allclose(layers, expected, rtol=1e-5, atol=1e-6)
    assert blank_tokens == [] and blank.shape == (3, 0, 16)


def test_whitespace_tokens_and_one_layer(folder, bilm):
    (tokens, top), = embedder(folder, tokenize="whitespace", layer="top")(["Wir  sahen's, nicht?"])
    assert tokens == ["Wir", "sahen's,", "nicht?"]
    (expected,) = bilm.embed_sentences([tokens])
    assert top.shape == (3, 16)
    np.testing.assert_allclose(top, expected[2], rtol=1e-5, atol=1e-6)


def test_sentences_are_read_one_by_one_with_the_sentencizer(folder, bilm):
    (tokens, layers), = embedder(folder, sentences=True, lang="en")(["It rained. We stayed."])
    assert tokens == ["It", "rained", ".", "We", "stayed", "."]
    expected = np.concatenate(bilm.embed_sentences([tokens[:3], tokens[3:]]), axis=1)
    np.testing.assert_allclose(layers, expected, rtol=1e-5, atol=1e-6)
    (whole,) = bilm.embed_sentences([tokens])
    assert not np.allclose(layers[1:, 3:], whole[1:, 3:], atol=1e-4)  # a sentence's context is its own


def test_nothing_to_embed_names_every_source():
    assert nothing_to_embed(["in.txt"]) == "in.txt is empty: nothing to embed"
    assert nothing_to_embed(["a.txt", "b.txt"]) == "a.txt, b.txt are empty: nothing to embed"
