"""Lexicon: the "lexicon" section of an options.json dict, read and written, its checks, and the
ids it gives tokens (ELMoForManyLangs' convention, <eow>/<bow> swapped as the original)."""
import numpy as np
import pytest

from spacy_elmo.bilm import ModelFormatError
from spacy_elmo.bilm.lexicon import Lexicon

CHARACTERS = {"<bos>": 0, "<eos>": 1, "<oov>": 2, "<pad>": 3, "<bow>": 4, "<eow>": 5, "a": 6, "b": 7}
WORDS = {"<bos>": 0, "<eos>": 1, "<oov>": 2, "ab": 3}
SECTION = {"convention": "elmoformanylangs", "characters": CHARACTERS, "n_characters": 8, "words": WORDS, "n_words": 4, "word_dim": 5}


def test_no_lexicon_section_means_byte_characters():
    assert Lexicon.from_options_json({"lstm": {}}, max_characters=6) is None


def test_the_section_reads_and_writes_back():
    lexicon = Lexicon.from_options_json({"lexicon": SECTION}, max_characters=6)
    assert lexicon.word_dim == 5 and lexicon.n_words == 4 and lexicon.pad_id == 3
    assert lexicon.to_options_json() == SECTION


def test_without_words_the_section_has_no_word_keys():
    section = {"convention": "elmoformanylangs", "characters": CHARACTERS, "n_characters": 8}
    lexicon = Lexicon.from_options_json({"lexicon": section}, max_characters=6)
    assert lexicon.word_dim == 0 and lexicon.to_options_json() == section


@pytest.mark.parametrize("section", [[], {"convention": "bilm-tf"}])
def test_another_convention_is_refused(section):
    with pytest.raises(ModelFormatError) as error:
        Lexicon.from_options_json({"lexicon": section}, max_characters=6)
    assert str(error.value) == "options: 'lexicon' must be an object with \"convention\": \"elmoformanylangs\""


def test_a_malformed_section_is_named():
    with pytest.raises(ModelFormatError, match=r"^options: invalid 'lexicon' section \(KeyError\('n_characters'\)\)$"):
        Lexicon.from_options_json({"lexicon": {"convention": "elmoformanylangs", "characters": CHARACTERS}}, max_characters=6)


def test_missing_specials_are_listed():
    characters = {k: v for k, v in CHARACTERS.items() if k not in ("<pad>", "<bow>")}
    with pytest.raises(ModelFormatError) as error:
        Lexicon(characters, 8, {}, 0, 0, 6)
    assert str(error.value) == "the character (char.dic) vocabulary lacks the special entries <pad>, <bow>"


def test_an_id_past_the_embedding_is_refused():
    with pytest.raises(ModelFormatError) as error:
        Lexicon({**CHARACTERS, "c": 8}, 8, {}, 0, 0, 6)
    assert str(error.value) == "the character vocabulary gives 'c' the id 8, but the character embedding has 8 rows"


def test_tokens_map_to_character_and_word_ids():
    lexicon = Lexicon(CHARACTERS, 8, WORDS, 4, 5, max_characters=6)
    ids = lexicon.encode(["<S>", "ab", "abzbab", "x"])
    assert ids.dtype == np.int64 and ids.shape == (4, 7)
    # first slot <eow> (5), then characters, then <bow> (4), then <pad> (3); last column: the word.
    np.testing.assert_array_equal(ids[0], [5, 0, 4, 3, 3, 3, 0])  # <S> is <bos>, a word of its own
    np.testing.assert_array_equal(ids[1], [5, 6, 7, 4, 3, 3, 3])
    np.testing.assert_array_equal(ids[2], [5, 6, 7, 2, 7, 4, 2])  # cut to M - 2 = 4 characters, z unknown
    np.testing.assert_array_equal(ids[3], [5, 2, 4, 3, 3, 3, 2])
