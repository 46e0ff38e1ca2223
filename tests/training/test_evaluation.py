"""Held-out perplexity: what is scored, how the three numbers relate, and its errors."""

import math
import random

import pytest

from spacy_elmo.bilm import ModelFormatError
from spacy_elmo.training.errors import CorpusError
from spacy_elmo.training.evaluation import evaluate_perplexity, require_softmax, scored_targets

from ..conftest import random_bilm
from .helpers import single_thread  # noqa: F401

pytestmark = pytest.mark.usefixtures("single_thread")
SENTENCES = [["a", "b"], ["c", "a", "zzz"], ["b"]]


def tiny_bilm():
    bilm = random_bilm()
    bilm.set_softmax(["<S>", "</S>", "<UNK>", "a", "b", "c"])
    return bilm


def test_scored_targets_counts_tokens_and_markers_less_the_last_of_each_row():
    # 4 + 5 + 3 stream positions (tokens and both markers), less one per row used
    assert scored_targets(SENTENCES, batch_size=1) == 11
    assert scored_targets(SENTENCES, batch_size=2) == 10
    assert scored_targets(SENTENCES, batch_size=8) == 9


def test_perplexity_scores_every_target_and_restores_training_mode():
    bilm = tiny_bilm().train()
    seen = []
    result = evaluate_perplexity(bilm, SENTENCES, batch_size=2, unroll_steps=3, progress=seen.append)
    assert bilm.training
    assert result.n_tokens == sum(seen) == scored_targets(SENTENCES, 2) == 10
    assert result.forward > 1 and result.backward > 1
    assert math.isclose(result.mean, math.sqrt(result.forward * result.backward))


def test_a_bilm_without_softmax_and_a_text_without_tokens_are_refused():
    with pytest.raises(ModelFormatError, match="this biLM has no softmax"):
        require_softmax(random_bilm())
    with pytest.raises(CorpusError, match="no tokens to evaluate"):
        evaluate_perplexity(tiny_bilm(), [], batch_size=2, unroll_steps=3)


@pytest.mark.parametrize("n_sentences,batch_size", [(1, 64), (5, 2), (30, 4), (7, 7)])
def test_scored_targets_counts_what_evaluation_scores(n_sentences, batch_size):
    rng = random.Random(n_sentences)
    words = ["a", "b", "dog", "cat", "the"]
    bilm = random_bilm()
    bilm.set_softmax(["<S>", "</S>", "<UNK>", *words])
    sentences = [[rng.choice(words) for _ in range(rng.randint(1, 12))] for _ in range(n_sentences)]
    updates = []
    result = evaluate_perplexity(bilm, sentences, batch_size=batch_size, unroll_steps=5, progress=updates.append)
    assert scored_targets(sentences, batch_size) == result.n_tokens == sum(updates)
