"""`spacy-elmo.CorefCorpus.v1`: whole documents with their gold tokens, heads copied on request."""
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_elmo.coref.corpus import create_coref_corpus
from spacy_elmo.errors import SpacyElmoError


def write_corpus(path, nlp):
    # Tokens spaCy's tokenizer would not produce ("ca" + "n't" without a space, "U.S" + ".").
    doc = Doc(nlp.vocab, words=["I", "ca", "n't", "see", "the", "U.S", ".", "It", "is", "far", "."],
              spaces=[True, False, True, True, True, False, True, True, True, False, False])  # fmt: skip
    doc.spans["coref_clusters_1"] = [doc[4:6], doc[7:8]]
    doc.spans["coref_head_clusters_1"] = [doc[5:6], doc[7:8]]
    doc.spans["coref_clusters_2"] = [doc[0:1]]
    doc.spans["coref_head_clusters_2"] = [doc[0:1]]
    doc.spans["coref_head_clusters_x"] = [doc[1:2]]  # not a cluster key: never copied
    DocBin(docs=[doc, doc[:7].as_doc()], store_user_data=True).to_disk(path)


def test_predicted_docs_keep_the_gold_tokens_and_whole_documents(tmp_path):
    nlp = spacy.blank("en")
    write_corpus(tmp_path / "c.spacy", nlp)
    examples = list(create_coref_corpus(tmp_path / "c.spacy")(nlp))
    assert len(examples) == 2
    predicted = examples[0].predicted
    assert [t.text for t in predicted] == [t.text for t in examples[0].reference]
    assert predicted.text == examples[0].reference.text
    assert [t.text for t in nlp.make_doc(predicted.text)] != [t.text for t in predicted]
    assert not predicted.has_annotation("SENT_START")
    assert dict(predicted.spans) == {}


def test_heads_are_copied_in_order_only_when_asked_and_limit_applies(tmp_path):
    nlp = spacy.blank("en")
    write_corpus(tmp_path / "c.spacy", nlp)
    examples = list(create_coref_corpus(tmp_path / "c.spacy", copy_heads=True, limit=1)(nlp))
    assert len(examples) == 1
    spans = examples[0].predicted.spans
    assert list(spans) == ["coref_head_clusters_1", "coref_head_clusters_2"]
    assert [(s.start, s.end) for s in spans["coref_head_clusters_1"]] == [(5, 6), (7, 8)]
    assert spans["coref_head_clusters_1"][0].doc is examples[0].predicted


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(SpacyElmoError, match="nothing.spacy is not a file"):
        list(create_coref_corpus(tmp_path / "nothing.spacy")(spacy.blank("en")))
