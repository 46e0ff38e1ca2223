"""Cutting docs into the token sequences the biLM reads, and putting its outputs back per doc.

Whitespace tokens are never shown to the biLM (it never saw them in training): they get zero
vectors and do not change their neighbours' context. Each sentence (or, without sentence
boundaries, the whole doc) is one sequence; sequences longer than `window` are cut into
overlapping windows, and each token keeps the output of the window where it is most central.
"""
from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Sequence, Tuple

from spacy.tokens import Doc

from ..errors import ConfigError, SpacyElmoError

CONTEXTS = ("auto", "sentences", "doc")


@dataclass(frozen=True)
class Segment:
    """One biLM input: some tokens of one doc, and the part of its output that is kept.

    doc (int): index of the doc in the batch.
    tokens (Tuple[int, ...]): indices in the doc of the tokens read, in order.
    words (Tuple[str, ...]): the text of those tokens.
    keep (Tuple[int, int]): start and end, within `tokens`, of the outputs kept.
    """

    doc: int
    tokens: Tuple[int, ...]
    words: Tuple[str, ...]
    keep: Tuple[int, int]


def check_context(context: str, window: int, stride: int) -> None:
    """Validate the context settings."""
    if context not in CONTEXTS:
        raise ConfigError(f"elmo model: unknown 'context' {context!r}; use one of {CONTEXTS}")
    if window < 1:
        raise ConfigError(f"elmo model: 'window' must be at least 1, got {window}")
    if not 1 <= stride <= window:
        raise ConfigError(f"elmo model: 'stride' must be between 1 and 'window' ({window}), got {stride}")


def plan_segments(docs: Sequence[Doc], context: str, window: int, stride: int) -> List[Segment]:
    """The biLM inputs for a batch of docs.

    context (str): "sentences" reads sentence by sentence, "doc" the whole doc, "auto"
        sentences where boundaries are set and the whole doc otherwise.
    window (int): most tokens per biLM input; longer sequences are cut into windows.
    stride (int): step between window starts (`stride` < `window` gives overlapping windows).
    """
    segments: List[Segment] = []
    for i, doc in enumerate(docs):
        texts = [token.text for token in doc]
        for sequence in _sequences(doc, texts, context):
            for tokens, keep in split_windows(sequence, window, stride):
                segments.append(Segment(i, tokens, tuple(texts[t] for t in tokens), keep))
    return segments


def assemble(docs: Sequence[Doc], segments: Sequence[Segment], outputs: Sequence[Any], zeros: Callable[[int], Any]) -> List[Any]:
    """Per doc, an array (n_layers, len(doc), width) from the segment outputs: torch tensors
    (differentiable: gradients of the doc tensors flow back to the segment outputs) or numpy
    arrays, as `zeros` and `outputs` are. Tokens that no segment keeps (whitespace) stay zero.

    outputs (Sequence[Any]): per segment its layers (n_layers, len(segment.tokens), width), in
        the dtype of the doc arrays.
    zeros (Callable[[int], Any]): makes the zero array of a doc of n tokens.
    """
    arrays = [zeros(len(doc)) for doc in docs]
    for segment, output in zip(segments, outputs):
        start, end = segment.keep
        arrays[segment.doc][:, list(segment.tokens[start:end])] = output[:, start:end]
    return arrays


def _sequences(doc: Doc, texts: List[str], context: str) -> Iterator[Tuple[int, ...]]:
    has_sentences = doc.has_annotation("SENT_START")
    if context == "sentences" and not has_sentences and len(doc):
        raise SpacyElmoError(
            "elmo: context = \"sentences\" but a doc has no sentence boundaries; add a "
            "'sentencizer' or 'parser' before 'elmo', or use context = \"auto\""
        )
    by_sentence = has_sentences and context != "doc"
    spans = [(sent.start, sent.end) for sent in doc.sents] if by_sentence else [(0, len(doc))]
    for start, end in spans:
        tokens = tuple(i for i in range(start, end) if not texts[i].isspace())
        if tokens:
            yield tokens


def split_windows(tokens: Tuple[int, ...], window: int, stride: int) -> Iterator[Tuple[Tuple[int, ...], Tuple[int, int]]]:
    """Cut `tokens` into windows of at most `window`, starting every `stride` tokens.

    RETURNS (Iterator): per window its tokens and the (start, end) of those it keeps; every
        token is kept by exactly one window, the one where it is most central.
    """
    n = len(tokens)
    if n <= window:
        yield tokens, (0, n)
        return
    starts = list(range(0, n - window, stride)) + [n - window]
    # Between consecutive windows, tokens switch at the middle of the overlap.
    bounds = [0] + [(nxt + cur + window) // 2 for cur, nxt in zip(starts, starts[1:])] + [n]
    for k, start in enumerate(starts):
        yield tokens[start : start + window], (bounds[k] - start, bounds[k + 1] - start)
