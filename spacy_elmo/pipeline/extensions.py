"""The `._.elmo` attributes of docs, spans and tokens.

`doc._.elmo` is a float32 numpy array: all layers (n_layers, n_tokens, width), or only the
selected representation (n_tokens, width). With all layers stored, `doc._.elmo_layer_mix`
holds the coefficients (one per layer) that give the selected representation. Both are plain
data in `doc.user_data`, so `Doc.to_bytes`, `DocBin(store_user_data=True)` and pickle keep them.
Whitespace tokens have zero vectors and are left out of span means.
"""
from typing import Optional

import numpy as np
from spacy.tokens import Doc, Span, Token

from ..attributes import ATTR, MIX_ATTR
from ..mixing import mix_layers


def install_extensions() -> None:
    """Register the extension attributes (once; safe to call again)."""
    if not Doc.has_extension(ATTR):
        Doc.set_extension(ATTR, default=None)
    if not Doc.has_extension(MIX_ATTR):
        Doc.set_extension(MIX_ATTR, default=None)
    if not Span.has_extension(ATTR):
        Span.set_extension(ATTR, getter=span_vector)
    if not Token.has_extension(ATTR):
        Token.set_extension(ATTR, getter=token_vector)


def token_vector(token: Token) -> Optional[np.ndarray]:
    """`token._.elmo`: the configured layer or mix for this token, or None if unset."""
    stored = token.doc._.get(ATTR)
    if stored is None:
        return None
    if stored.ndim == 2:
        return stored[token.i]
    return mix_layers(token.doc._.get(MIX_ATTR), stored[:, token.i])


def span_vector(span: Span) -> Optional[np.ndarray]:
    """`span._.elmo`: the mean over the span's non-whitespace tokens (zeros if none), or None."""
    stored = span.doc._.get(ATTR)
    if stored is None:
        return None
    rows = [token.i for token in span if not token.is_space]
    width = stored.shape[-1]
    if not rows:
        return np.zeros((width,), dtype=np.float32)
    if stored.ndim == 2:
        return stored[rows].mean(axis=0)
    return mix_layers(span.doc._.get(MIX_ATTR), stored[:, rows].mean(axis=1))
