"""Under the `coref` extra (spaCy 3.7), the rest of the package imports and embeds as under 3.8."""
import pytest
import spacy

pytest.importorskip("spacy_experimental", reason="needs the `coref` extra")


def test_the_coref_environment_runs_spacy_3_7_and_the_elmo_component_embeds():
    assert spacy.__version__.startswith("3.7."), spacy.__version__
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    doc = nlp("We saw a play. Let us play chess.")
    assert doc._.elmo.shape == (3, 10, 256)
    assert doc[3]._.elmo.shape == (256,)
    # The two "play"s differ (noun and verb); each token's vector is the average of the layers.
    assert float(abs(doc[3]._.elmo - doc[7]._.elmo).max()) > 0.1
    assert abs(doc._.elmo.mean(axis=0)[3] - doc[3]._.elmo).max() < 1e-5
