"""Cutting docs into the biLM's inputs (`plan_segments`, `split_windows`), putting the outputs
back per doc (`assemble`), and the context settings' checks."""
import numpy as np
import pytest
from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_elmo.layers.segments import Segment, assemble, check_context, plan_segments, split_windows


def doc(words, sent_starts=None):
    return Doc(Vocab(), words=words, sent_starts=sent_starts)


def test_windows_keep_each_token_once_from_its_most_central_window():
    for n, window, stride in [(5, 8, 6), (20, 8, 6), (21, 8, 8), (100, 10, 3), (9, 8, 1)]:
        kept = []
        for tokens, (start, end) in split_windows(tuple(range(n)), window, stride):
            assert len(tokens) <= window and 0 <= start < end <= len(tokens)
            kept.extend(tokens[start:end])
        assert kept == list(range(n))
    # 20 tokens, window 8, stride 6: windows start at 0, 6, 12; switches in mid-overlap.
    pieces = [(t[0], keep) for t, keep in split_windows(tuple(range(20)), 8, 6)]
    assert pieces == [(0, (0, 7)), (6, (1, 7)), (12, (1, 8))]



def test_a_sequence_within_the_window_is_one_window_keeping_everything():
    assert list(split_windows((4, 7, 9), 3, 1)) == [((4, 7, 9), (0, 3))]


def test_auto_reads_sentences_where_they_are_set_and_skips_whitespace_tokens():
    docs = [doc(["A", "b", " ", "C", "d"], [True, False, False, True, False]), doc(["e", "  ", "f"])]
    assert plan_segments(docs, "auto", 8, 8) == [
        Segment(0, (0, 1), ("A", "b"), (0, 2)),
        Segment(0, (3, 4), ("C", "d"), (0, 2)),
        Segment(1, (0, 2), ("e", "f"), (0, 2)),
    ]


def test_doc_context_reads_the_whole_doc_across_sentence_boundaries():
    docs = [doc(["A", "b", "C"], [True, False, True])]
    assert plan_segments(docs, "doc", 8, 8) == [Segment(0, (0, 1, 2), ("A", "b", "C"), (0, 3))]


def test_sentences_context_needs_boundaries_except_in_an_empty_doc():
    assert plan_segments([doc([])], "sentences", 8, 8) == []
    with pytest.raises(ValueError, match="context = \"sentences\" but a doc has no sentence boundaries"):
        plan_segments([doc(["a", "b"])], "sentences", 8, 8)


def test_a_whitespace_only_doc_gives_no_segment():
    assert plan_segments([doc([" ", "\n"])], "auto", 8, 8) == []


def test_long_sentences_are_cut_into_windows_of_their_own_tokens():
    words = [f"w{i}" for i in range(6)]
    segments = plan_segments([doc(["x", *words], [True, True, False, False, False, False, False])], "auto", 4, 2)
    assert segments == [
        Segment(0, (0,), ("x",), (0, 1)),
        Segment(0, (1, 2, 3, 4), ("w0", "w1", "w2", "w3"), (0, 3)),
        Segment(0, (3, 4, 5, 6), ("w2", "w3", "w4", "w5"), (1, 4)),
    ]


def test_assemble_puts_each_kept_output_at_its_tokens_and_leaves_the_rest_zero():
    docs = [doc(["a", " ", "b", "c"]), doc(["d"])]
    segments = [Segment(0, (0, 2, 3), ("a", "b", "c"), (0, 2)), Segment(0, (2, 3), ("b", "c"), (1, 2)), Segment(1, (0,), ("d",), (0, 1))]
    outputs = [
        np.arange(12, dtype=np.float32).reshape(2, 3, 2),
        np.full((2, 2, 2), -1.0, np.float32),
        np.full((2, 1, 2), 7.0, np.float32),
    ]
    first, second = assemble(docs, segments, outputs, lambda n: np.zeros((2, n, 2), np.float32))
    expected = np.zeros((2, 4, 2), np.float32)
    expected[:, [0, 2]] = outputs[0][:, :2]  # the first window keeps "a" and "b"
    expected[:, 3] = -1.0  # the second keeps "c"; the whitespace token stays zero
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(second, np.full((2, 1, 2), 7.0))


@pytest.mark.parametrize(
    "context,window,stride,message",
    [
        ("paragraphs", 8, 8, r"unknown 'context' 'paragraphs'; use one of \('auto', 'sentences', 'doc'\)"),
        ("auto", 0, 1, "'window' must be at least 1, got 0"),
        ("auto", 8, 9, r"'stride' must be between 1 and 'window' \(8\), got 9"),
        ("auto", 8, 0, r"'stride' must be between 1 and 'window' \(8\), got 0"),
    ],
)
def test_check_context_names_the_bad_setting(context, window, stride, message):
    with pytest.raises(ValueError, match=message):
        check_context(context, window, stride)
    check_context("sentences", 8, 8)  # the bounds themselves are allowed
