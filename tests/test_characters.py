import numpy as np

from spacy_elmo.characters import CharacterMapper


def raw(ids: np.ndarray) -> list:
    """Back to bilm-tf's raw ids (before the +1 shift)."""
    return (ids - 1).tolist()


def test_bilm_tf_examples_with_five_characters():
    mapper = CharacterMapper(5)
    ids = mapper.encode(["th", "thhhhh", chr(256) + "t"])
    assert raw(ids[0]) == [258, 116, 104, 259, 260]
    assert raw(ids[1]) == [258, 116, 104, 104, 259]
    assert raw(ids[2]) == [258, 196, 128, 116, 259]


def test_sentence_markers_with_fifty_characters():
    ids = CharacterMapper(50).encode(["<S>", "</S>"])
    assert ids[0].tolist() == [259, 257, 260] + [261] * 47
    assert ids[1].tolist() == [259, 258, 260] + [261] * 47


def test_long_tokens_are_cut_at_48_bytes_even_inside_a_character():
    ids = CharacterMapper(50).encode(["é" * 30])  # 60 bytes
    row = ids[0]
    assert row[0] == 259 and row[-1] == 260
    assert row[1:49].tolist() == ([0xC3 + 1, 0xA9 + 1] * 24)


def test_empty_token_and_nul_and_lone_surrogate():
    ids = CharacterMapper(10).encode(["", "\x00", "a\ud800b"])
    assert ids[0].tolist()[:3] == [259, 260, 261]
    assert ids[1].tolist()[:3] == [259, 1, 260]
    assert ids[2].tolist()[:4] == [259, ord("a") + 1, ord("b") + 1, 260]


def test_a_batch_is_padded_with_all_zero_token_slots():
    mapper = CharacterMapper(10)
    ids = mapper.encode_batch([["ab", "c"], [], ["d"]])
    assert ids.shape == (3, 2, 10) and ids.dtype == np.int64
    assert (ids[0] == mapper.encode(["ab", "c"])).all() and (ids[2, 0] == mapper.encode(["d"])[0]).all()
    assert not ids[1].any() and not ids[2, 1].any()
    assert mapper.encode_batch([]).shape == (0, 0, 10)
