"""Opt-in: make `.vector` and `.similarity()` of tokens, spans and docs use ELMo.

The component sets `doc.tensor` to the selected representation and installs these hooks.
Hooks are not serialized by spaCy: after `Doc.from_bytes`, a `DocBin` or `n_process > 1`
they are gone, but `doc.tensor` (kept by `Doc.to_bytes`) still holds the vectors.
"""
import numpy as np
from spacy.tokens import Doc, Span, Token


def set_vector_hooks(doc: Doc, vectors: np.ndarray) -> None:
    """Store `vectors` (n_tokens, width) as `doc.tensor` and route vector lookups to it."""
    doc.tensor = vectors
    doc.user_hooks["vector"] = doc_vector
    doc.user_hooks["has_vector"] = _has_vector
    doc.user_hooks["similarity"] = cosine
    doc.user_span_hooks["vector"] = span_vector
    doc.user_span_hooks["has_vector"] = _has_vector
    doc.user_span_hooks["similarity"] = cosine
    doc.user_token_hooks["vector"] = token_vector
    doc.user_token_hooks["has_vector"] = _has_vector
    doc.user_token_hooks["similarity"] = cosine


def token_vector(token: Token) -> np.ndarray:
    """The token's row of `doc.tensor`."""
    return token.doc.tensor[token.i]


def span_vector(span: Span) -> np.ndarray:
    """Mean of the span's non-whitespace token vectors (zeros if none)."""
    return _mean(span.doc.tensor, [t.i for t in span if not t.is_space])


def doc_vector(doc: Doc) -> np.ndarray:
    """Mean of the doc's non-whitespace token vectors (zeros if none)."""
    return _mean(doc.tensor, [t.i for t in doc if not t.is_space])


def cosine(first, second) -> float:  # type: ignore[no-untyped-def]
    """Cosine similarity of two objects' `.vector`; 0.0 if either is all zeros."""
    a, b = first.vector, second.vector
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b) / norm) if norm > 0 else 0.0


def _has_vector(_: object) -> bool:
    return True


def _mean(tensor: np.ndarray, rows: list) -> np.ndarray:
    if not rows:
        return np.zeros((tensor.shape[1],), dtype=np.float32)
    return tensor[rows].mean(axis=0)
