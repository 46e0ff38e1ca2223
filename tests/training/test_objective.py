"""The training objective: both LMs' losses over one shared softmax, sampled only in training."""

import pytest
import torch

from spacy_elmo.training.batcher import RowBatcher, to_tensors
from spacy_elmo.training.corpus import Cursor
from spacy_elmo.training.objective import BiLMObjective, top_layer
from spacy_elmo.training.sampled_softmax import full_softmax_loss
from spacy_elmo.training.vocab import SoftmaxVocab

from ..conftest import random_bilm
from .helpers import single_thread  # noqa: F401

pytestmark = pytest.mark.usefixtures("single_thread")
TOKENS = ["<S>", "</S>", "<UNK>", "a", "b", "c"]


def tiny_bilm():
    bilm = random_bilm()
    bilm.set_softmax(TOKENS)
    return bilm


def batch_of(bilm, sentences, batch_size=2, unroll_steps=3):
    stream = ((Cursor(), s) for s in sentences)
    window = RowBatcher(stream, batch_size, unroll_steps).next_window()
    return to_tensors(window, bilm.characters.encode, SoftmaxVocab(TOKENS))


def test_a_bilm_without_softmax_cannot_be_trained():
    with pytest.raises(ValueError, match="the biLM needs a softmax and vocabulary to be trained"):
        BiLMObjective(random_bilm(), n_negative_samples=4, dropout=0.0)


def test_negatives_are_sampled_only_when_the_vocabulary_is_larger():
    bilm = tiny_bilm()
    assert BiLMObjective(bilm, n_negative_samples=len(TOKENS), dropout=0.0).sampler is None
    assert BiLMObjective(bilm, n_negative_samples=2, dropout=0.0).sampler is not None


def test_in_eval_mode_the_losses_are_the_full_softmax_of_each_direction():
    bilm = tiny_bilm()
    objective = BiLMObjective(bilm, n_negative_samples=2, dropout=0.5).eval()
    batch = batch_of(bilm, [["a", "b"], ["c", "zzz", "a"]])
    with torch.no_grad():
        losses, state = objective(batch, None)
        top, _ = top_layer(bilm, batch, None)
    assert losses.shape == (2,) and len(state) == bilm.config.n_layers
    for direction in range(2):
        expected = full_softmax_loss(
            top[direction][batch.mask], batch.targets[direction][batch.mask], bilm.softmax.weight, bilm.softmax.bias
        )
        assert torch.allclose(losses[direction], expected)
