"""`LexiconTokenEncoder` (ELMoForManyLangs' token encoder) on a tiny lexicon: the word embedding
goes before the CNN features into the projection, the word id column is not a character, and
models without word embeddings (the layers against the original: tests/bilm/test_efml_format.py)."""
import dataclasses

import torch

from spacy_elmo.bilm.lexicon import Lexicon
from spacy_elmo.bilm.lexicon_encoder import LexiconTokenEncoder

from ..conftest import TINY_CONFIG

SPECIALS = ["<bos>", "<eos>", "<oov>", "<pad>", "<bow>", "<eow>"]
CHARACTERS = {c: i for i, c in enumerate(SPECIALS + list("abcdt"))}
WORDS = {"<bos>": 0, "<eos>": 1, "<oov>": 2, "cat": 3, "dog": 4}
CONFIG = dataclasses.replace(TINY_CONFIG, max_characters_per_token=8)


def lexicon(word_dim=3):
    words, n_words = (WORDS, len(WORDS)) if word_dim else ({}, 0)
    return Lexicon(CHARACTERS, len(CHARACTERS), words, n_words, word_dim, CONFIG.max_characters_per_token)


def make(word_dim=3):
    torch.manual_seed(0)
    return LexiconTokenEncoder(CONFIG, lexicon(word_dim)).eval()


def test_the_projection_reads_the_word_embedding_then_the_cnn_features():
    encoder = make()
    assert encoder.projection.in_features == 3 + CONFIG.n_filters
    assert encoder.projection.out_features == CONFIG.projection_dim
    ids = torch.from_numpy(lexicon().encode(["cat", "dog", "bat"]))
    assert ids[:, -1].tolist() == [3, 4, 2]  # the word ids: "bat" is out of the vocabulary
    with torch.no_grad():
        encoder.projection.weight.zero_()
        encoder.projection.bias.zero_()
        encoder.projection.weight[:3, :3] = torch.eye(3)  # pass the first three inputs through
        out = encoder(ids)
        words = encoder.word_embedding(ids[:, -1])
    torch.testing.assert_close(out[:, :3], words)
    assert torch.count_nonzero(out[:, 3:]) == 0


def test_the_characters_decide_the_cnn_features_and_the_word_id_does_not_count_as_one():
    encoder = make()
    ids = torch.from_numpy(lexicon().encode(["cat", "dog"]))
    assert encoder._used_lengths(ids).tolist() == [5, 5]  # <eow> c a t <bow>: the word column is left out
    with torch.no_grad():
        encoder.projection.weight.zero_()
        encoder.projection.weight[:, 3:] = torch.randn(CONFIG.projection_dim, CONFIG.n_filters)
        swapped = ids.clone()
        swapped[:, -1] = ids[:, -1].flip(0)  # other words, same characters
        torch.testing.assert_close(encoder(ids), encoder(swapped))
        assert not torch.allclose(encoder(ids)[0], encoder(ids)[1])


def test_without_word_embeddings_the_cnn_features_alone_are_projected():
    encoder = make(word_dim=0)
    assert encoder.word_embedding is None and encoder.projection.in_features == CONFIG.n_filters
    ids = torch.from_numpy(lexicon(0).encode(["cat", "dog", "<S>"]))
    with torch.no_grad():
        out = encoder(ids)
    assert out.shape == (3, CONFIG.projection_dim) and torch.isfinite(out).all()
