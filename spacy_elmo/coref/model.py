"""`spacy-elmo.WordCoref.v1`: word-level coreference (Dobrovolskii 2021) in thinc, no torch.

Each word i scores the words j < i within `antecedent_window` words: a coarse bilinear score
h_i·W·h_j picks the top `antecedent_limit` candidates, a fine FFNN over [g_i, g_j, g_i*g_j,
distance bucket] adds to it; the dummy antecedent ε scores 0. A span scorer maps a head word to
its mention: start and end logits for the words of its sentence within ±`span_window`.
Everything runs in blocks of `block_size` rows, so memory is O(n·k), never O(n²).
"""
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Dropout, Linear, Model, Relu, chain
from thinc.types import Floats1d, Floats2d, Ints1d, Ints2d

from ..registry_names import WORD_COREF

N_DISTANCE_BUCKETS = 9
NEG_INF = -1e4  # the score of a padded (invalid) candidate


@dataclass
class AntecedentScores:
    """Scores of one doc's candidates: `scores` (n, k+1), column 0 is ε; `candidates` (n, k)
    word indices of column c+1; `valid` (n, k) whether a candidate is real (else padding)."""

    scores: Floats2d
    candidates: Ints2d
    valid: numpy.ndarray


@registry.architectures(WORD_COREF)
def build_word_coref_v1(
    tok2vec: Model[List[Doc], List[Floats2d]],
    distance_embedding_size: int = 20,
    fine_width: int = 64,
    hidden_size: int = 256,
    dropout: float = 0.3,
    antecedent_limit: int = 50,
    antecedent_window: int = 1024,
    block_size: int = 512,
    span_window: int = 20,
    span_hidden_size: int = 128,
) -> Model[List[Doc], List[Floats2d]]:
    """The word-level coreference model. Its forward is the tok2vec (word vectors per doc);
    the component scores antecedents and spans with `score_antecedents` and `score_spans`.

    tok2vec (Model[List[Doc], List[Floats2d]]): word vectors, e.g. an ELMo listener tok2vec.
    distance_embedding_size (int): width of the distance-bucket embeddings.
    fine_width (int): width of the word projection the fine pair scorer reads.
    hidden_size (int): hidden width of the fine pair scorer.
    dropout (float): dropout in the pair and span scorers.
    antecedent_limit (int): candidates kept per word after the coarse score (k).
    antecedent_window (int): how many previous words a word may link to.
    block_size (int): rows scored at once (memory per block is block_size × window).
    span_window (int): how far from its head a mention may start or end.
    span_hidden_size (int): hidden width of the span scorer.
    """
    coarse = Linear(nO=None, nI=None)
    fine_proj = Linear(nO=fine_width)
    fine = chain(Relu(nO=hidden_size), Dropout(dropout), Linear(nO=1))
    span = chain(Relu(nO=span_hidden_size), Dropout(dropout), Linear(nO=2))
    model: Model = Model(
        "word-coref",
        forward,
        init=init,
        layers=[tok2vec, coarse, fine_proj, fine, span],
        params={"dist_E": None, "span_E": None},
        dims={"nO": None, "n_dist": distance_embedding_size},
        attrs={
            "antecedent_limit": antecedent_limit,
            "antecedent_window": antecedent_window,
            "block_size": block_size,
            "span_window": span_window,
        },
        refs={"tok2vec": tok2vec, "coarse": coarse, "fine_proj": fine_proj, "fine": fine, "span": span},
    )
    return model


def init(model: Model, X: Optional[List[Doc]] = None, Y: Optional[object] = None) -> None:
    tok2vec = model.get_ref("tok2vec")
    if X is not None:
        tok2vec.initialize(X=X)
    elif not tok2vec.has_dim("nO") or tok2vec.get_dim("nO") is None:
        return
    width = tok2vec.get_dim("nO")
    n_dist = model.get_dim("n_dist")
    window = model.attrs["span_window"]
    model.set_dim("nO", width)
    ops = model.ops
    coarse, fine_proj = model.get_ref("coarse"), model.get_ref("fine_proj")
    coarse.set_dim("nO", width)
    sample = ops.alloc2f(2, width)
    coarse.initialize(X=sample, Y=sample)
    fine_proj.initialize(X=sample)
    f = fine_proj.get_dim("nO")
    model.get_ref("fine").initialize(X=ops.alloc2f(2, 3 * f + n_dist), Y=ops.alloc2f(2, 1))
    model.get_ref("span").initialize(X=ops.alloc2f(2, 2 * width + n_dist), Y=ops.alloc2f(2, 2))
    rng = numpy.random.default_rng(0)
    model.set_param("dist_E", ops.asarray2f(rng.normal(0, 0.1, (N_DISTANCE_BUCKETS, n_dist)).astype("f")))
    model.set_param("span_E", ops.asarray2f(rng.normal(0, 0.1, (2 * window + 1, n_dist)).astype("f")))


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    """The word vectors of each doc (the tok2vec)."""
    return model.get_ref("tok2vec")(docs, is_train)


def distance_buckets(distance: numpy.ndarray) -> numpy.ndarray:
    """Dobrovolskii's buckets: 1-4 exact (0-3), then log2 buckets up to 64+ (4-8)."""
    distance = numpy.maximum(distance, 1)
    log_bucket = numpy.minimum(numpy.floor(numpy.log2(distance)), 6).astype("i") + 2
    return numpy.where(distance < 5, distance - 1, log_bucket).astype("i")


def select_candidates(model: Model, h: Floats2d, A: Floats2d) -> Tuple[Ints2d, numpy.ndarray]:
    """The top-k previous words of each word by coarse score (no gradient), block by block:
    (n, k) indices and validity, k = min(antecedent_limit, window)."""
    ops = model.ops
    n = h.shape[0]
    window, block = model.attrs["antecedent_window"], model.attrs["block_size"]
    k = max(1, min(model.attrs["antecedent_limit"], window))
    candidates = numpy.zeros((n, k), dtype="i")
    valid = numpy.zeros((n, k), dtype=bool)
    h_np, A_np = ops.to_numpy(h), ops.to_numpy(A)
    for start in range(0, n, block):
        end = min(n, start + block)
        lo = max(0, start - window)
        scores = A_np[start:end] @ h_np[lo:end].T  # (m, end - lo)
        rows = numpy.arange(start, end)[:, None]
        cols = numpy.arange(lo, end)[None, :]
        allowed = (cols < rows) & (rows - cols <= window)
        scores = numpy.where(allowed, scores, -numpy.inf)
        kk = min(k, scores.shape[1])
        top = numpy.argpartition(-scores, kk - 1, axis=1)[:, :kk] if kk < scores.shape[1] else numpy.tile(numpy.arange(scores.shape[1]), (end - start, 1))
        candidates[start:end, :kk] = top + lo
        valid[start:end, :kk] = numpy.take_along_axis(allowed, top, axis=1)
    candidates[~valid] = 0
    return ops.asarray2i(candidates), valid


def score_antecedents(model: Model, h: Floats2d, is_train: bool) -> Tuple[AntecedentScores, Callable[[Floats2d], Floats2d]]:
    """Coarse + fine scores of each word's candidates, with ε in column 0. The backprop takes
    d(scores) (n, k+1) and returns d(h).

    The fine scorer's first layer reads [g_i, g_j, g_i*g_j, distance]; its weights are applied
    block by block (W1·g_i and W2·g_j once per word, W4·distance once per bucket), so that only
    W3·(g_i*g_j) is computed per pair: the same function as the layer on the concatenation.
    """
    ops = model.ops
    n, width = h.shape
    coarse, fine_proj, fine = model.get_ref("coarse"), model.get_ref("fine_proj"), model.get_ref("fine")
    first, rest = fine.layers[0], fine.layers[1:]
    A, bp_A = coarse(h, is_train)
    g, bp_g = fine_proj(h, is_train)
    candidates, valid = select_candidates(model, h, A)
    k = candidates.shape[1]
    f = g.shape[1]
    dist_E = model.get_param("dist_E")
    W, b = first.get_param("W"), first.get_param("b")
    W_i, W_j, W_ij, W_d = W[:, :f], W[:, f : 2 * f], W[:, 2 * f : 3 * f], W[:, 3 * f :]
    P_i, P_j, P_d = ops.gemm(g, W_i, trans2=True), ops.gemm(g, W_j, trans2=True), ops.gemm(dist_E, W_d, trans2=True)
    buckets = ops.asarray1i(distance_buckets(numpy.arange(n)[:, None] - ops.to_numpy(candidates)).ravel())
    scores = ops.alloc2f(n, k + 1)
    saved = []
    for start in range(0, n, model.attrs["block_size"]):
        end = min(n, start + model.attrs["block_size"])
        m = end - start
        cand = candidates[start:end]
        Hc = h[cand]  # (m, k, d)
        Ab = A[start:end]
        coarse_b = (Ab[:, None, :] * Hc).sum(axis=2)
        Gc = g[cand]
        products = (g[start:end, None, :] * Gc).reshape(m * k, f)
        bk = buckets[start * k : end * k]
        pre = (P_i[start:end, None, :] + P_j[cand]).reshape(m * k, -1) + ops.gemm(products, W_ij, trans2=True) + P_d[bk] + b
        hidden = ops.relu(pre)
        backprops = []
        for layer in rest:
            hidden, bp_layer = layer(hidden, is_train)
            backprops.append(bp_layer)
        total = coarse_b + hidden.reshape(m, k)
        scores[start:end, 1:] = ops.xp.where(ops.asarray(valid[start:end]), total, NEG_INF)
        if is_train:
            saved.append((start, end, cand, Hc, Ab, Gc, products, bk, pre, backprops))

    def backprop(d_scores: Floats2d) -> Floats2d:
        d_scores = d_scores[:, 1:] * ops.asarray(valid)
        dA = ops.alloc2f(n, width)
        dh = ops.alloc2f(n, width)
        dg = ops.alloc2f(n, f)
        dP_i, dP_j, dP_d = ops.alloc2f(*P_i.shape), ops.alloc2f(*P_j.shape), ops.alloc2f(*P_d.shape)
        dW_ij = ops.alloc2f(*W_ij.shape)
        db = ops.alloc1f(b.shape[0])
        for start, end, cand, Hc, Ab, Gc, products, bk, pre, backprops in saved:
            m = end - start
            dt = ops.asarray2f(d_scores[start:end])
            dA[start:end] = (dt[:, :, None] * Hc).sum(axis=1)
            _scatter(ops, dh, cand.ravel(), (dt[:, :, None] * Ab[:, None, :]).reshape(m * k, width))
            d_hidden = dt.reshape(m * k, 1)
            for bp_layer in reversed(backprops):
                d_hidden = bp_layer(d_hidden)
            d_pre = d_hidden * (pre > 0)
            db += d_pre.sum(axis=0)
            dP_i[start:end] += d_pre.reshape(m, k, -1).sum(axis=1)
            _scatter(ops, dP_j, cand.ravel(), d_pre)
            _scatter(ops, dP_d, bk, d_pre)
            dW_ij += ops.gemm(d_pre, products, trans1=True)
            d_products = ops.gemm(d_pre, W_ij).reshape(m, k, f)
            dg[start:end] += (d_products * Gc).sum(axis=1)
            _scatter(ops, dg, cand.ravel(), (d_products * g[start:end, None, :]).reshape(m * k, f))
        dg += ops.gemm(dP_i, W_i) + ops.gemm(dP_j, W_j)
        dW = ops.xp.concatenate(
            [ops.gemm(dP_i, g, trans1=True), ops.gemm(dP_j, g, trans1=True), dW_ij, ops.gemm(dP_d, dist_E, trans1=True)], axis=1
        )
        first.inc_grad("W", dW)
        first.inc_grad("b", db)
        model.inc_grad("dist_E", ops.gemm(dP_d, W_d))
        return dh + bp_A(dA) + bp_g(dg)

    return AntecedentScores(scores, candidates, valid), backprop


def span_windows(model: Model, n: int, heads: Ints1d, sent_bounds: Tuple[numpy.ndarray, numpy.ndarray]) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """For each head, the positions head-W..head+W (clipped into the doc) and whether each is
    a word of the head's sentence: (M, 2W+1) indices and mask."""
    window = model.attrs["span_window"]
    offsets = numpy.arange(-window, window + 1)
    positions = heads[:, None] + offsets[None, :]
    sent_start, sent_end = sent_bounds
    inside = (positions >= sent_start[heads][:, None]) & (positions < sent_end[heads][:, None])
    return numpy.clip(positions, 0, max(n - 1, 0)), inside


def score_spans(
    model: Model, h: Floats2d, heads: Ints1d, sent_bounds: Tuple[numpy.ndarray, numpy.ndarray], is_train: bool
) -> Tuple[Floats2d, numpy.ndarray, Callable]:
    """Start and end logits of each head's window positions: (M, 2W+1, 2) as a (M·(2W+1), 2)
    array, the (M, 2W+1) positions and their mask (-inf-like outside the sentence). The backprop
    takes d(logits) and returns d(h)."""
    ops = model.ops
    n, width = h.shape
    span, span_E = model.get_ref("span"), model.get_param("span_E")
    positions, inside = span_windows(model, n, heads, sent_bounds)
    M, P = positions.shape
    Hh = ops.xp.broadcast_to(h[ops.asarray1i(heads)][:, None, :], (M, P, width))
    Hw = h[ops.asarray2i(positions)]
    offsets = numpy.tile(numpy.arange(P), M).astype("i")
    X = ops.xp.concatenate([Hh, Hw, ops.xp.broadcast_to(span_E[None, :, :], (M, P, span_E.shape[1]))], axis=2)
    logits, bp_span = span(ops.asarray2f(X.reshape(M * P, -1)), is_train)
    mask = ops.asarray(inside.reshape(M * P, 1))
    logits = ops.xp.where(mask, logits, NEG_INF)

    def backprop(d_logits: Floats2d) -> Floats2d:
        dX = bp_span(ops.asarray2f(d_logits * mask)).reshape(M, P, -1)
        dh = ops.alloc2f(n, width)
        _scatter(ops, dh, ops.asarray1i(heads), dX[:, :, :width].sum(axis=1))
        _scatter(ops, dh, ops.asarray1i(positions.ravel()), dX[:, :, width : 2 * width].reshape(M * P, width))
        d_E = ops.alloc2f(*span_E.shape)
        _scatter(ops, d_E, ops.asarray1i(offsets), dX[:, :, 2 * width :].reshape(M * P, -1))
        model.inc_grad("span_E", d_E)
        return dh

    return logits, positions, backprop


def _scatter(ops: object, table: Floats2d, indices: object, values: object) -> None:
    """table[indices] += values, rows repeated (the backprop of a gather)."""
    xp = ops.xp  # type: ignore[attr-defined]
    ops.scatter_add(table, xp.ascontiguousarray(indices, dtype="i"), xp.ascontiguousarray(values, dtype="f"))  # type: ignore[attr-defined]


def log_softmax(x: numpy.ndarray, axis: int = -1) -> numpy.ndarray:
    x = x - x.max(axis=axis, keepdims=True)
    return x - numpy.log(numpy.exp(x).sum(axis=axis, keepdims=True))


__all__ = ["AntecedentScores", "build_word_coref_v1", "score_antecedents", "score_spans", "distance_buckets", "log_softmax"]
