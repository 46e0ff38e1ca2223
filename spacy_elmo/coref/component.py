"""`elmo_coref`: trainable word-level coreference that finds mentions and chains in raw text.

Writes one span group per chain, `doc.spans["{span_cluster_prefix}_N"]`, N = 1, 2, ... in order
of first mention (spaCy's coref convention). The model is `spacy-elmo.WordCoref.v1` (thinc and
numpy only, so a pipeline saved on ONNX Runtime runs without torch).
"""
from itertools import islice
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer

from ..dependencies import require
from ..errors import SpacyElmoError
from ..layers.listener import ElmoListener
from ..registry_names import ELMO_COREF_FACTORY
from .corpus import DEFAULT_HEAD_PREFIX, is_cluster_key
from .model import AntecedentScores, log_softmax, score_antecedents, score_spans

Cluster = List[Tuple[int, int]]  # (start, end) token spans
GoldMention = Tuple[int, int, int]  # (head, start, end)

DEFAULT_MODEL = """
[model]
@architectures = "spacy-elmo.WordCoref.v1"
distance_embedding_size = 20
fine_width = 64
hidden_size = 256
dropout = 0.3
antecedent_limit = 50
antecedent_window = 1024
block_size = 512
span_window = 20
span_hidden_size = 128

[model.tok2vec]
@architectures = "spacy.Tok2Vec.v2"

[model.tok2vec.embed]
@architectures = "spacy-elmo.ElmoListener.v1"
width = 128
upstream = "elmo"
dropout = 0.0

[model.tok2vec.embed.static_embed]
@architectures = "spacy.MultiHashEmbed.v2"
width = 128
attrs = ["NORM", "PREFIX", "SUFFIX", "SHAPE"]
rows = [5000, 1000, 2500, 2500]
include_static_vectors = false

[model.tok2vec.encode]
@architectures = "spacy.MaxoutWindowEncoder.v2"
width = 128
window_size = 1
maxout_pieces = 3
depth = 2
"""
SPAN_CHUNK = 1024  # heads whose spans are scored at once in prediction


@Language.factory(
    ELMO_COREF_FACTORY,
    assigns=["doc.spans"],
    default_config={
        "model": Config().from_str(DEFAULT_MODEL)["model"],
        "span_cluster_prefix": "coref_clusters",
        "head_prefix": DEFAULT_HEAD_PREFIX,
        "bce_weight": 0.5,
        "span_weight": 1.0,
    },
    default_score_weights={"coref_conll_f": 1.0, "coref_lea_f": 0.0},
)
def make_elmo_coref(
    nlp: Language,
    name: str,
    model: Model,
    span_cluster_prefix: str,
    head_prefix: str,
    bce_weight: float,
    span_weight: float,
) -> "ElmoCoref":
    """Word-level coreference: heads link to antecedent heads, heads grow into mentions.

    model (Model): `spacy-elmo.WordCoref.v1`.
    span_cluster_prefix (str): the span groups written (and read as gold), `{prefix}_N`.
    head_prefix (str): gold head-word groups `{head_prefix}_N` beside the mention groups, if any.
    bce_weight (float): weight of the binary cross-entropy term beside the marginal likelihood.
    span_weight (float): weight of the head → mention loss.
    """
    return ElmoCoref(nlp.vocab, model, name, span_cluster_prefix=span_cluster_prefix, head_prefix=head_prefix, bce_weight=bce_weight, span_weight=span_weight)


class ElmoCoref(TrainablePipe):
    """Finds coreference chains in raw text (no gold mentions at prediction time)."""

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "elmo_coref",
        *,
        span_cluster_prefix: str = "coref_clusters",
        head_prefix: str = DEFAULT_HEAD_PREFIX,
        bce_weight: float = 0.5,
        span_weight: float = 1.0,
    ) -> None:
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg = {"span_cluster_prefix": span_cluster_prefix, "head_prefix": head_prefix, "bce_weight": bce_weight, "span_weight": span_weight}
        self.skipped_mentions = 0  # gold mentions whose head could not be found (training)

    @property
    def prefix(self) -> str:
        return self.cfg["span_cluster_prefix"]

    # --- prediction ------------------------------------------------------------------------

    def predict(self, docs: Iterable[Doc]) -> List[List[Cluster]]:
        """The chains of each doc, as lists of (start, end) spans."""
        docs = list(docs)
        result: List[List[Cluster]] = [[] for _ in docs]
        nonempty = [i for i, doc in enumerate(docs) if len(doc)]
        if not nonempty:
            return result
        vectors = self.model.predict([docs[i] for i in nonempty])
        for i, h in zip(nonempty, vectors):
            result[i] = self._predict_doc(docs[i], h)
        return result

    def _predict_doc(self, doc: Doc, h: numpy.ndarray) -> List[Cluster]:
        scores, _ = score_antecedents(self.model, h, is_train=False)
        chains = head_chains(scores)
        if not chains:
            return []
        span_of = grow_spans(self.model, doc, h, sorted({head for chain in chains for head in chain}))
        return spans_to_clusters([[span_of[head] for head in chain] for chain in chains])

    def set_annotations(self, docs: Iterable[Doc], clusters_per_doc: List[List[Cluster]]) -> None:
        """Write `{prefix}_N` span groups (replacing earlier ones of this prefix)."""
        for doc, clusters in zip(docs, clusters_per_doc):
            for key in [key for key in doc.spans if is_cluster_key(self.prefix, key)]:
                del doc.spans[key]
            for number, cluster in enumerate(clusters, 1):
                doc.spans[f"{self.prefix}_{number}"] = [doc[start:end] for start, end in cluster]

    # --- training --------------------------------------------------------------------------

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Learn from a batch: the antecedent and span losses of each doc."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = [eg for eg in examples if len(eg.predicted)]
        validate_examples(examples, "ElmoCoref.update")
        if not examples:
            return losses
        vectors, bp_vectors = self.model.begin_update([eg.predicted for eg in examples])
        d_vectors = []
        for eg, h in zip(examples, vectors):
            loss, dh = self._doc_loss(eg, h)
            losses[self.name] += loss
            d_vectors.append(dh)
        bp_vectors(d_vectors)
        if sgd is not None:
            self.finish_update(sgd)
        return losses

    def _doc_loss(self, eg: Example, h: numpy.ndarray) -> Tuple[float, numpy.ndarray]:
        ops = self.model.ops
        mentions, skipped = gold_mentions(eg, self.prefix, self.cfg["head_prefix"])
        self.skipped_mentions += skipped
        scores, bp_scores = score_antecedents(self.model, h, is_train=True)
        loss, d_scores = antecedent_loss(scores, mentions, self.cfg["bce_weight"])
        dh = bp_scores(ops.asarray2f(d_scores))
        by_head: Dict[int, GoldMention] = {}
        for chain in mentions:
            for head, start, end in chain:
                if head not in by_head or end - start > by_head[head][2] - by_head[head][1]:
                    by_head[head] = (head, start, end)
        if by_head and self.cfg["span_weight"]:
            bounds = sentence_bounds(eg.predicted)
            targets = numpy.asarray(sorted(by_head.values()), dtype="i")
            logits, positions, bp_spans = score_spans(self.model, h, targets[:, 0], bounds, is_train=True)
            span_loss, d_logits = span_loss_and_grad(self.model.ops.to_numpy(logits), positions, targets, self.model.attrs["span_window"])
            loss += self.cfg["span_weight"] * span_loss
            dh = dh + bp_spans(ops.asarray2f(self.cfg["span_weight"] * d_logits))
        return loss, dh

    def get_loss(self, examples: Iterable[Example], scores: object) -> Tuple[float, object]:
        """The loss is computed per doc in `update` (it needs the model's intermediate scores)."""
        raise NotImplementedError("ElmoCoref computes its loss in update()")

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None) -> None:
        """Check the upstream `elmo` and the gold chains, then size the model on sample docs."""
        validate_get_examples(get_examples, "ElmoCoref.initialize")
        if nlp is not None:
            check_upstream(self.model, nlp, self.name)
        examples = list(islice(get_examples(), 10))
        if not any(is_cluster_key(self.prefix, key) for eg in examples for key in eg.reference.spans):
            raise SpacyElmoError(
                f"elmo_coref '{self.name}': no training example has '{self.prefix}_N' span groups (gold chains)"
            )
        # The sample docs are not annotated by elmo; an elmo sourced from a trained pipeline is not
        # initialized again, so its listeners are told here that they may see such docs.
        # Each listener gets back the state it had (an elmo initialized beside it set it already).
        listeners = {node: node.initializing for node in self.model.walk() if isinstance(node, ElmoListener)}
        for listener in listeners:
            listener.initializing = True
        try:
            self.model.initialize(X=[eg.predicted for eg in examples if len(eg.predicted)] or None)
        finally:
            for listener, state in listeners.items():
                listener.initializing = state

    def score(self, examples: Iterable[Example], **kwargs: object) -> Dict[str, float]:
        """CoNLL-2012 metrics (MUC, B³, CEAFe, `coref_conll_f`; needs scorch) and LEA."""
        require("scorch", f"scoring elmo_coref '{self.name}' (nlp.evaluate, spacy train's dev scores)")
        from .scoring import conll_scores, lea_scores

        examples = list(examples)
        gold, predicted = [eg.reference for eg in examples], [eg.predicted for eg in examples]
        result = conll_scores(gold, predicted, self.prefix)
        result.update(lea_scores(gold, predicted, self.prefix))
        return result


# --- helpers --------------------------------------------------------------------------------


def check_upstream(model: Model, nlp: Language, name: str) -> None:
    """One clear error when the model listens to an `elmo` component the pipeline lacks."""
    from ..pipeline.component import Elmo

    # nlp.components: spacy train initializes with sourced and frozen components disabled.
    elmos = [pipe_name for pipe_name, pipe in nlp.components if isinstance(pipe, Elmo)]
    for node in model.walk():
        if isinstance(node, ElmoListener):
            wanted = node.upstream_name
            if (wanted == "*" and not elmos) or (wanted != "*" and wanted not in elmos):
                raise SpacyElmoError(
                    f"elmo_coref '{name}': its tok2vec listens to an elmo component {wanted!r}, but the pipeline "
                    f"has none ({', '.join(nlp.pipe_names)}); add one before it, or use a tok2vec without {node.name}"
                )


def grow_spans(model: Model, doc: Doc, h: numpy.ndarray, heads: List[int]) -> Dict[int, Tuple[int, int]]:
    """The mention of each head word: the best start at or before it and the best end at or
    after it, within its sentence and the span window; (start, end) token offsets by head."""
    bounds = sentence_bounds(doc)
    heads_array = numpy.asarray(heads, dtype="i")
    span_of: Dict[int, Tuple[int, int]] = {}
    for start in range(0, len(heads_array), SPAN_CHUNK):
        chunk = heads_array[start : start + SPAN_CHUNK]
        logits, positions, _ = score_spans(model, h, chunk, bounds, is_train=False)
        logits = model.ops.to_numpy(logits).reshape(len(chunk), positions.shape[1], 2)
        for row, head in enumerate(chunk):
            before = positions[row] <= head
            after = positions[row] >= head
            first = positions[row][numpy.argmax(numpy.where(before, logits[row, :, 0], -numpy.inf))]
            last = positions[row][numpy.argmax(numpy.where(after, logits[row, :, 1], -numpy.inf))]
            span_of[int(head)] = (int(first), int(last) + 1)
    return span_of


def sentence_bounds(doc: Doc) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Each token's sentence start and end; a doc without sentence boundaries is one sentence."""
    n = len(doc)
    starts, ends = numpy.zeros(n, dtype="i"), numpy.full(n, n, dtype="i")
    if n and doc.has_annotation("SENT_START"):
        for sent in doc.sents:
            starts[sent.start : sent.end] = sent.start
            ends[sent.start : sent.end] = sent.end
    return starts, ends


def gold_mentions(eg: Example, prefix: str, head_prefix: str) -> Tuple[List[List[GoldMention]], int]:
    """The gold chains of an example as (head, start, end) in predicted-doc tokens, and how many
    mentions were skipped (no head found, or not aligned). Heads come from `{head_prefix}_N`
    (one-word spans, in the order of the mentions) when present, else the dependency root of
    the mention when the reference is parsed, else the mention's last word (a fallback)."""
    ref, pred = eg.reference, eg.predicted
    same_tokens = len(ref) == len(pred) and all(a.text == b.text for a, b in zip(ref, pred))
    parsed = ref.has_annotation("DEP")
    chains: List[List[GoldMention]] = []
    skipped = 0
    for key, group in ref.spans.items():
        if not is_cluster_key(prefix, key):
            continue
        heads = ref.spans.get(f"{head_prefix}_{key[len(prefix) + 1:]}")
        if heads is not None and len(heads) != len(group):
            heads = None
        chain = []
        for index, span in enumerate(group):
            if heads is not None:
                head = heads[index].start
            elif parsed:
                head = span.root.i
            else:
                head = span.end - 1
            if not span.start <= head < span.end:
                skipped += 1
                continue
            if not same_tokens:
                aligned = eg.get_aligned_spans_y2x([span, ref[head : head + 1]], allow_overlap=True)
                if len(aligned) != 2:
                    skipped += 1
                    continue
                span_x, head_x = aligned
                chain.append((head_x.start, span_x.start, span_x.end))
            else:
                chain.append((head, span.start, span.end))
        if len({m[0] for m in chain}) >= 2:
            chains.append(chain)
    return chains, skipped


def antecedent_loss(scores: AntecedentScores, chains: List[List[GoldMention]], bce_weight: float) -> Tuple[float, numpy.ndarray]:
    """Marginal log-likelihood of the gold antecedents among the kept candidates (ε when none),
    mean over words, plus `bce_weight` × binary cross-entropy; the loss and d(scores)."""
    s = numpy.asarray(scores.scores, dtype="f")
    candidates = numpy.asarray(scores.candidates)
    n, k1 = s.shape
    cluster_of = numpy.full(n, -1, dtype="i")
    gold = numpy.zeros((n, k1), dtype=bool)
    for number, chain in enumerate(chains):
        heads = sorted({m[0] for m in chain})
        cluster_of[:] = -1
        cluster_of[heads] = number
        rows = numpy.asarray(heads, dtype="i")
        same = (cluster_of[candidates[rows]] == number) & scores.valid[rows] & (candidates[rows] < rows[:, None])
        gold[rows, 1:] |= same
    gold[:, 0] = ~gold[:, 1:].any(axis=1)
    log_p = log_softmax(s)
    gold_log_p = log_softmax(numpy.where(gold, s, -numpy.inf))
    loss = float(-(numpy.logaddexp.reduce(numpy.where(gold, log_p, -numpy.inf), axis=1)).sum() / n)
    d_scores = (numpy.exp(log_p) - numpy.where(gold, numpy.exp(gold_log_p), 0.0)) / n
    if bce_weight:
        probs = 1.0 / (1.0 + numpy.exp(-numpy.clip(s, -50, 50)))
        bce = -(gold * numpy.log(probs + 1e-9) + (~gold) * numpy.log(1 - probs + 1e-9)).mean()
        loss += bce_weight * float(bce)
        d_scores += bce_weight * (probs - gold) / s.size
    d_scores[:, 1:] *= scores.valid
    return loss, d_scores.astype("f")


def span_loss_and_grad(logits: numpy.ndarray, positions: numpy.ndarray, targets: numpy.ndarray, window: int) -> Tuple[float, numpy.ndarray]:
    """Cross-entropy of the gold start and end among each head's window positions; mentions
    reaching past the window are left out. The loss and d(logits) (M·P, 2)."""
    M, P = positions.shape
    logits = logits.reshape(M, P, 2)
    heads, starts, ends = targets[:, 0], targets[:, 1], targets[:, 2] - 1
    start_i, end_i = starts - heads + window, ends - heads + window
    usable = (start_i >= 0) & (end_i < P)
    d = numpy.zeros_like(logits)
    loss = 0.0
    count = max(int(usable.sum()), 1)
    for column, target in ((0, start_i), (1, end_i)):
        log_p = log_softmax(logits[:, :, column], axis=1)
        rows = numpy.nonzero(usable)[0]
        loss -= float(log_p[rows, target[rows]].sum()) / count
        grad = numpy.exp(log_p)
        grad[rows, target[rows]] -= 1.0
        grad[~usable] = 0.0
        d[:, :, column] = grad / count
    return loss, d.reshape(M * P, 2).astype("f")


def head_chains(scores: AntecedentScores) -> List[List[int]]:
    """Chains of heads: each word links to its best candidate if it beats ε (union-find);
    chains of 2+ words, ordered by first word."""
    s = numpy.asarray(scores.scores)
    best = s.argmax(axis=1)
    parent = list(range(s.shape[0]))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i in numpy.nonzero(best > 0)[0]:
        j = int(scores.candidates[i, best[i] - 1])
        parent[find(int(i))] = find(j)
    groups: Dict[int, List[int]] = {}
    for i in range(s.shape[0]):
        groups.setdefault(find(i), []).append(i)
    return sorted((g for g in groups.values() if len(g) >= 2), key=lambda g: g[0])


def spans_to_clusters(chains: List[Cluster]) -> List[Cluster]:
    """Sorted, deduplicated span clusters; a span already in an earlier cluster is dropped;
    clusters of 2+ spans, in order of first mention."""
    seen = set()
    clusters = []
    for chain in sorted((sorted(set(c)) for c in chains), key=lambda c: c[0]):
        kept = [span for span in chain if span not in seen]
        seen.update(kept)
        if len(kept) >= 2:
            clusters.append(kept)
    return sorted(clusters, key=lambda c: c[0])


__all__ = ["ElmoCoref", "make_elmo_coref"]
