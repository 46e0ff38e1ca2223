"""Tokenized sentences: their check, and length-sorted batches that bound both the rows and the
padded token slots of a forward pass. No torch here (the ONNX runner uses it too)."""
from typing import Callable, List, Optional, Sequence, TypeVar

Sentences = Sequence[Sequence[str]]
T = TypeVar("T")

# Each sentence is read between its <S> and </S> markers.
MARKERS_PER_SENTENCE = 2


def length_batches(lengths: Sequence[int], batch_size: int, max_tokens: int) -> List[List[int]]:
    """Indices of sentences in batches, longest first.

    lengths (Sequence[int]): tokens per sentence.
    batch_size (int): most sentences per batch.
    max_tokens (int): most padded token slots (sentences × (longest + markers)) per batch; a
        longer sentence runs alone.
    RETURNS (List[List[int]]): the batches, as indices into `lengths`.
    """
    if batch_size < 1 or max_tokens < 1:
        raise ValueError(f"batch_size and max_tokens must be positive, got {batch_size}, {max_tokens}")
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    batches, start = [], 0
    while start < len(order):
        rows = max(1, min(batch_size, max_tokens // (lengths[order[start]] + MARKERS_PER_SENTENCE)))
        batches.append(order[start : start + rows])
        start += rows
    return batches


def check_sentences(sentences: Sentences) -> None:
    """Raise a TypeError unless `sentences` is a sequence of sequences of strings."""
    if isinstance(sentences, (str, bytes)):
        raise TypeError("expected a list of tokenized sentences (lists of strings), got a string")
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, (str, bytes)):
            raise TypeError(f"sentence {i} is a {type(sentence).__name__}; pass its tokens as a list of strings")
        for j, token in enumerate(sentence):
            if not isinstance(token, str):
                raise TypeError(f"sentence {i}, token {j} is a {type(token).__name__}, not a str: {token!r}")


def in_length_batches(
    sentences: Sentences, embed_batch: Callable[[Sentences], List[T]], batch_size: int, max_tokens: int
) -> List[T]:
    """`embed_batch` over length-sorted batches of `sentences` (`length_batches`), its results
    put back in the sentences' order."""
    check_sentences(sentences)
    results: List[Optional[T]] = [None] * len(sentences)
    for batch in length_batches([len(s) for s in sentences], batch_size, max_tokens):
        for index, result in zip(batch, embed_batch([sentences[i] for i in batch])):
            results[index] = result
    return results  # type: ignore[return-value]
