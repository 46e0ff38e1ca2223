"""Where a coreference pipeline loses its score: the ceilings of word-level coreference on a
corpus, and, for a trained `elmo_coref`, linking and span growth scored apart.

Ceilings (gold chains, no model): mentions that share their head word with a longer mention
(a word-level model keeps one mention per head), and mentions that no head could grow into
(longer than the span window from their head, or crossing a sentence boundary of the
sentencizer). With `--model`: the CoNLL F1 of the pipeline; of its head-word chains against the
gold head-word chains (linking alone); of gold chains whose mentions were grown from their gold
heads by the model (span growth alone); and mention recall and precision (exact spans).

    python benchmarks/coref_diagnosis.py corpus/coref/dev.spacy --model training/coref/seed0/model-best

Gold tokens; CoNLL F1 as `spacy_elmo.coref.scoring` computes it (chains only).
"""
import json
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import spacy
import typer
from spacy.tokens import Doc, DocBin

from spacy_elmo.coref.component import ElmoCoref, grow_spans, head_chains, sentence_bounds
from spacy_elmo.coref.corpus import DEFAULT_HEAD_PREFIX, gold_tokens_doc, is_cluster_key
from spacy_elmo.coref.model import score_antecedents
from spacy_elmo.coref.scoring import conll_scores

PREFIX = "coref_clusters"
Span = Tuple[int, int]

app = typer.Typer(add_completion=False)


def gold_chains(doc: Doc) -> List[List[Tuple[int, Span]]]:
    """Each gold chain as (head, (start, end)) per mention."""
    chains = []
    for key, group in doc.spans.items():
        if is_cluster_key(PREFIX, key):
            heads = doc.spans[f"{DEFAULT_HEAD_PREFIX}_{key[len(PREFIX) + 1:]}"]
            chains.append([(head.start, (span.start, span.end)) for head, span in zip(heads, group)])
    return chains


def with_clusters(doc: Doc, clusters: List[List[Span]]) -> Doc:
    """A copy of `doc`'s words with `clusters` as its span groups."""
    out = gold_tokens_doc(doc)
    for number, cluster in enumerate((c for c in clusters if len(c) >= 2), 1):
        out.spans[f"{PREFIX}_{number}"] = [out[s:e] for s, e in sorted(set(cluster))]
    return out


def ceilings(gold: List[Doc], nlp: spacy.language.Language, window: int) -> Dict[str, float]:
    """Scores and counts of gold chains under the limits of word-level coreference."""
    one_per_head, growable = [], []
    mentions = shared = not_growable = 0
    for doc in gold:
        longest: Dict[int, Span] = {}
        for chain in gold_chains(doc):
            for head, span in chain:
                if head not in longest or span[1] - span[0] > longest[head][1] - longest[head][0]:
                    longest[head] = span
        starts, ends = sentence_bounds(nlp.get_pipe("sentencizer")(gold_tokens_doc(doc)))
        clusters, kept = [], []
        for chain in gold_chains(doc):
            mentions += len(chain)
            shared += sum(longest[head] != span for head, span in chain)
            clusters.append([longest[head] for head, _ in chain])
            fits = [
                span for head, span in chain
                if head - span[0] <= window and span[1] - 1 - head <= window and starts[head] <= span[0] and span[1] <= ends[head]
            ]
            not_growable += len(chain) - len(fits)
            kept.append(fits)
        one_per_head.append(with_clusters(doc, clusters))
        growable.append(with_clusters(doc, kept))
    return {
        "mentions": mentions,
        "mentions_sharing_a_head": shared,
        "mentions_no_head_can_grow_into": not_growable,
        "conll_f_one_mention_per_head": round(100 * conll_scores(gold, one_per_head)["coref_conll_f"], 2),
        "conll_f_growable_mentions_only": round(100 * conll_scores(gold, growable)["coref_conll_f"], 2),
    }


def model_breakdown(gold: List[Doc], nlp: spacy.language.Language) -> Dict[str, float]:
    """The pipeline's CoNLL F1, and linking and span growth scored apart."""
    coref = next(pipe for _, pipe in nlp.pipeline if isinstance(pipe, ElmoCoref))
    predicted, head_gold, head_predicted, grown = [], [], [], []
    for doc in gold:
        out = nlp(gold_tokens_doc(doc))
        predicted.append(out)
        h = coref.model.predict([out])[0]
        scores, _ = score_antecedents(coref.model, h, is_train=False)
        head_predicted.append(with_clusters(doc, [[(i, i + 1) for i in chain] for chain in head_chains(scores)]))
        chains = gold_chains(doc)
        head_gold.append(with_clusters(doc, [[(head, head + 1) for head, _ in chain] for chain in chains]))
        span_of = grow_spans(coref.model, out, h, sorted({head for chain in chains for head, _ in chain}))
        grown.append(with_clusters(doc, [[span_of[head] for head, _ in chain] for chain in chains]))
    gold_mentions = {(i, s.start, s.end) for i, d in enumerate(gold) for k, g in d.spans.items() if is_cluster_key(PREFIX, k) for s in g}
    found = {(i, s.start, s.end) for i, d in enumerate(predicted) for k, g in d.spans.items() if is_cluster_key(PREFIX, k) for s in g}
    hits = len(gold_mentions & found)
    return {
        "conll_f": round(100 * conll_scores(gold, predicted)["coref_conll_f"], 2),
        "conll_f_head_words_linking_alone": round(100 * conll_scores(head_gold, head_predicted)["coref_conll_f"], 2),
        "conll_f_gold_heads_spans_grown": round(100 * conll_scores(gold, grown)["coref_conll_f"], 2),
        "mention_recall": round(100 * hits / max(len(gold_mentions), 1), 2),
        "mention_precision": round(100 * hits / max(len(found), 1), 2),
    }


@app.command()
def main(
    corpus: Path = typer.Argument(..., help="A DocBin of documents with coref_clusters_N and coref_head_clusters_N"),
    model: Optional[Path] = typer.Option(None, help="A trained pipeline with an elmo_coref component"),
    window: int = typer.Option(20, help="The span window of the ceilings (the component's span_window)"),
    threads: int = typer.Option(1, help="torch threads (0: torch's default)"),
) -> None:
    """Print the ceilings and, with --model, the breakdown, as one JSON object."""
    nlp = spacy.load(model) if model else spacy.blank("en")
    if threads:
        import torch

        torch.set_num_threads(threads)
    if "sentencizer" not in nlp.pipe_names:
        nlp.add_pipe("sentencizer", first=True)
    gold = list(DocBin().from_disk(corpus).get_docs(nlp.vocab))
    result = {"corpus": str(corpus), "documents": len(gold), **ceilings(gold, nlp, window)}
    if model:
        result.update({"model": str(model), **model_breakdown(gold, nlp)})
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    app()
