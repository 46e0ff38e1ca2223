"""`spacy-elmo.coref_conll_scorer.v1`: the CoNLL-2012 coreference metrics of a corpus.

MUC, B³ and CEAFe (and their mean, the CoNLL F1) as the reference scorer computes them over a
whole corpus (Pradhan et al. 2014): the mentions of all documents are keyed by document, so each
metric sums its numerators and denominators over documents (CEAFe's best alignment never pairs
entities of different documents). The metric formulas are `scorch`'s. Mentions are token spans;
a mention the system puts in two clusters counts once, in its first. LEA, spacy-experimental's
own score, is reported beside them (`coref_f`).
"""
from statistics import StatisticsError
from typing import Dict, Hashable, Iterable, List, Set, Tuple

import numpy
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from ..registry_names import COREF_CONLL_SCORER
from .corpus import is_cluster_key

DEFAULT_CLUSTER_PREFIX = "coref_clusters"
METRICS = ("muc", "b3", "ceafe")

Mention = Tuple[int, int, int]  # (document, start token, end token)


def doc_clusters(doc: Doc, prefix: str, doc_id: int, seen: Set[Hashable]) -> List[Set[Mention]]:
    """The clusters `{prefix}_N` of one doc as sets of (doc_id, start, end); a mention already in
    `seen` (an earlier cluster) is left out, and empty clusters are dropped."""
    clusters = []
    for key, group in doc.spans.items():
        if not is_cluster_key(prefix, key):
            continue
        cluster = set()
        for span in group:
            mention = (doc_id, span.start, span.end)
            if mention not in seen:
                seen.add(mention)
                cluster.add(mention)
        if cluster:
            clusters.append(cluster)
    return clusters


def conll_scores(
    gold: Iterable[Doc], predicted: Iterable[Doc], prefix: str = DEFAULT_CLUSTER_PREFIX
) -> Dict[str, float]:
    """MUC, B³, CEAFe precision, recall and F1 and the CoNLL F1 of predicted clusters against gold
    ones, pairing the docs in order (same tokens). Keys: `coref_{muc,b3,ceafe}_{p,r,f}`, `coref_conll_f`."""
    from scorch import scores as metrics  # the `scoring` extra

    key: List[Set[Mention]] = []
    response: List[Set[Mention]] = []
    for doc_id, (gold_doc, predicted_doc) in enumerate(zip(gold, predicted)):
        key += doc_clusters(gold_doc, prefix, doc_id, set())
        response += doc_clusters(predicted_doc, prefix, doc_id, set())
    result: Dict[str, float] = {}
    for name, metric in zip(METRICS, (metrics.muc, metrics.b_cubed, metrics.ceaf_e)):
        try:
            with numpy.errstate(divide="ignore"):  # scorch's harmonic mean of numpy zeros
                recall, precision, f1 = metric(key, response) if key and response else (0.0, 0.0, 0.0)
        except StatisticsError:  # scorch's harmonic mean of a recall and precision of 0
            recall = precision = f1 = 0.0
        result.update({f"coref_{name}_p": precision, f"coref_{name}_r": recall, f"coref_{name}_f": f1})
    result["coref_conll_f"] = sum(result[f"coref_{name}_f"] for name in METRICS) / len(METRICS)
    return result


@spacy.registry.scorers(COREF_CONLL_SCORER)
def make_coref_conll_scorer(span_cluster_prefix: str = DEFAULT_CLUSTER_PREFIX):  # type: ignore[no-untyped-def]
    """A scorer for `experimental_coref`: the CoNLL-2012 metrics (see `conll_scores`) and LEA
    (`coref_f`, `coref_p`, `coref_r`, as spacy-experimental's own scorer gives them).

    span_cluster_prefix (str): the span groups to score, e.g. "coref_clusters" for the full
        mentions the span resolver writes, "coref_head_clusters" for the head words.
    """

    def score(examples: Iterable[Example], **kwargs: object) -> Dict[str, float]:
        from spacy_experimental.coref.coref_scorer import score_coref_clusters

        examples = list(examples)
        result = conll_scores([eg.reference for eg in examples], [eg.predicted for eg in examples], span_cluster_prefix)
        result.update(score_coref_clusters(examples, span_cluster_prefix=span_cluster_prefix))
        return result

    return score


def _links(size: int) -> int:
    return size * (size - 1) // 2


def _lea(key: List[Set[Mention]], response: List[Set[Mention]]) -> Tuple[float, float]:
    """LEA's numerator and denominator of `key` against `response` (recall; swap for precision):
    each entity weighs its size, and is resolved by the share of its links (a singleton: its
    self-link) that a response entity also has (Moosavi and Strube 2016)."""
    entity_of = {}
    for index, entity in enumerate(response):
        for mention in entity:
            entity_of[mention] = index
    numerator = denominator = 0.0
    for entity in key:
        denominator += len(entity)
        if len(entity) == 1:
            (mention,) = entity
            index = entity_of.get(mention)
            numerator += float(index is not None and len(response[index]) == 1)
            continue
        overlaps: Dict[int, int] = {}
        for mention in entity:
            if mention in entity_of:
                overlaps[entity_of[mention]] = overlaps.get(entity_of[mention], 0) + 1
        numerator += len(entity) * sum(_links(n) for n in overlaps.values()) / _links(len(entity))
    return numerator, denominator


def lea_scores(
    gold: Iterable[Doc], predicted: Iterable[Doc], prefix: str = DEFAULT_CLUSTER_PREFIX
) -> Dict[str, float]:
    """LEA precision, recall and F1 over a corpus (docs paired in order, same tokens; sums over
    documents as `conll_scores` does). Keys: `coref_lea_{p,r,f}`."""
    key: List[Set[Mention]] = []
    response: List[Set[Mention]] = []
    for doc_id, (gold_doc, predicted_doc) in enumerate(zip(gold, predicted)):
        key += doc_clusters(gold_doc, prefix, doc_id, set())
        response += doc_clusters(predicted_doc, prefix, doc_id, set())
    r_num, r_den = _lea(key, response)
    p_num, p_den = _lea(response, key)
    recall = r_num / r_den if r_den else 0.0
    precision = p_num / p_den if p_den else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"coref_lea_p": precision, "coref_lea_r": recall, "coref_lea_f": f1}
