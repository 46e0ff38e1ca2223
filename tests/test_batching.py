"""Length-sorted batches bounded in rows and padded token slots, and the check of tokenized sentences."""
import pytest

from spacy_elmo.batching import check_sentences, length_batches


def test_batches_are_longest_first_and_cover_every_sentence_once():
    lengths = [3, 10, 1, 7, 5]
    batches = length_batches(lengths, batch_size=2, max_tokens=1000)
    assert batches == [[1, 3], [4, 0], [2]]


def test_max_tokens_bounds_the_padded_slots_with_the_markers():
    # Longest 8 tokens + <S> and </S> = 10 slots per row: 25 slots hold 2 rows.
    lengths = [8, 8, 8, 2, 2]
    batches = length_batches(lengths, batch_size=64, max_tokens=25)
    assert batches == [[0, 1], [2, 3], [4]]
    for batch in batches:
        assert len(batch) * (max(lengths[i] for i in batch) + 2) <= 25


def test_a_sentence_longer_than_max_tokens_runs_alone():
    assert length_batches([50, 1, 1], batch_size=8, max_tokens=10) == [[0], [1, 2]]


def test_no_sentences_no_batches():
    assert length_batches([], batch_size=4, max_tokens=100) == []


@pytest.mark.parametrize("batch_size, max_tokens", [(0, 10), (4, 0), (-1, -1)])
def test_bounds_must_be_positive(batch_size, max_tokens):
    with pytest.raises(ValueError) as error:
        length_batches([1], batch_size, max_tokens)
    assert str(error.value) == f"batch_size and max_tokens must be positive, got {batch_size}, {max_tokens}"


def test_tokenized_sentences_pass():
    assert check_sentences([["a", "b"], [], ("c",)]) is None


@pytest.mark.parametrize("sentences", ["a b", b"a b"])
def test_a_string_is_not_a_list_of_sentences(sentences):
    with pytest.raises(TypeError, match="^expected a list of tokenized sentences \\(lists of strings\\), got a string$"):
        check_sentences(sentences)


def test_an_untokenized_sentence_is_named():
    with pytest.raises(TypeError) as error:
        check_sentences([["a"], "b c"])
    assert str(error.value) == "sentence 1 is a str; pass its tokens as a list of strings"


def test_a_token_that_is_not_a_string_is_named():
    with pytest.raises(TypeError) as error:
        check_sentences([["a"], ["b", 3]])
    assert str(error.value) == "sentence 1, token 1 is a int, not a str: 3"


def test_in_length_batches_puts_results_back_in_order():
    from spacy_elmo.batching import in_length_batches

    sentences = [["a"] * 3, ["b"], ["c"] * 2, ["d"] * 3]
    calls = []

    def embed(batch):
        calls.append([len(s) for s in batch])
        return [" ".join(s) for s in batch]

    assert in_length_batches(sentences, embed, batch_size=2, max_tokens=100) == ["a a a", "b", "c c", "d d d"]
    assert sorted(sum(calls, [])) == [1, 2, 3, 3] and all(len(c) <= 2 for c in calls)
