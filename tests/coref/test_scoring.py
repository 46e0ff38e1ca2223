"""The CoNLL-2012 metrics of `spacy-elmo.coref_conll_scorer.v1`, checked against hand computations."""
import pytest
import spacy
from spacy.tokens import Doc

pytest.importorskip("scorch", reason="needs the `coref` extra")

from spacy_elmo.coref.scoring import conll_scores  # noqa: E402

NLP = spacy.blank("en")


def doc_with(clusters, n=8, prefix="coref_clusters"):
    doc = Doc(NLP.vocab, words=[f"w{i}" for i in range(n)])
    for number, cluster in enumerate(clusters, 1):
        doc.spans[f"{prefix}_{number}"] = [doc[start:end] for start, end in cluster]
    return doc


A, B, C, D, E = (0, 1), (1, 2), (2, 3), (3, 4), (4, 5)


def test_muc_b3_ceafe_of_a_known_example():
    # key {a b c} {d e}, response {a b} {c d e}:
    # MUC R = P = 2/3; B³ R = P = 11/15; CEAFe: Φ4 = 0.8 for both aligned pairs, so R = P = 0.8.
    scores = conll_scores([doc_with([[A, B, C], [D, E]])], [doc_with([[A, B], [C, D, E]])])
    assert scores["coref_muc_r"] == pytest.approx(2 / 3) and scores["coref_muc_p"] == pytest.approx(2 / 3)
    assert scores["coref_b3_f"] == pytest.approx(11 / 15)
    assert scores["coref_ceafe_f"] == pytest.approx(0.8)
    assert scores["coref_conll_f"] == pytest.approx((2 / 3 + 11 / 15 + 0.8) / 3)


def test_documents_are_scored_as_one_corpus_without_mixing_their_mentions():
    # Two documents with the same token offsets: doc 1 right, doc 2 wrong. Summed over the corpus,
    # MUC R = (1 + 0) / (1 + 1) = 0.5; if the offsets were merged across docs, it would be 1.0.
    gold = [doc_with([[A, B]]), doc_with([[A, B]])]
    predicted = [doc_with([[A, B]]), doc_with([[A, E]])]
    scores = conll_scores(gold, predicted)
    assert scores["coref_muc_r"] == pytest.approx(0.5) and scores["coref_muc_p"] == pytest.approx(0.5)
    assert conll_scores(gold, gold)["coref_conll_f"] == pytest.approx(1.0)


def test_a_mention_in_two_predicted_clusters_counts_once_and_no_clusters_score_zero():
    twice = conll_scores([doc_with([[A, B], [C, D]])], [doc_with([[A, B], [B, C, D]])])
    once = conll_scores([doc_with([[A, B], [C, D]])], [doc_with([[A, B], [C, D]])])
    assert twice == once
    empty = conll_scores([doc_with([[A, B]])], [doc_with([])])
    assert empty["coref_conll_f"] == 0.0 and empty["coref_muc_r"] == 0.0
    nothing_right = conll_scores([doc_with([[A, B]])], [doc_with([[C, D]])])
    assert nothing_right["coref_conll_f"] == 0.0
