"""CoNLL-U details not exercised by test_docs.py: empty nodes, multiword tokens without a space,
the last sentence without a blank line, "_" features, and heads that are not numbers."""
import pytest

from spacy_elmo.corpora.conllu import read_conllu
from spacy_elmo.errors import SpacyElmoError

ROWS = [
    "# newdoc",
    "# sent_id = s1",
    "1-2\tdel\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No",
    "1\tde\tde\tADP\tSP\t_\t3\tcase\t_\t_",
    "2\tel\tel\tDET\tDA\tDefinite=Def\t3\tdet\t_\t_",
    "3\tpaís\tpaís\tNOUN\tNC\tGender=Masc|Number=Sing\t0\troot\t_\tSpaceAfter=No",
    "3.1\tes\tser\tAUX\t_\t_\t_\t_\t3:cop\t_",
    "4\t.\t.\tPUNCT\tFp\t_\t3\tpunct\t_\t_",
]


def write(tmp_path, rows):
    path = tmp_path / "ud.conllu"
    path.write_text("\n".join(rows), encoding="utf8")  # no newline or blank line at the end
    return path


def test_every_column_of_the_syntactic_words(tmp_path):
    (sentence,) = read_conllu(write(tmp_path, ROWS))
    assert sentence.sent_id == "s1" and sentence.newdoc  # "# newdoc" without an id counts too
    assert sentence.words == ["de", "el", "país", "."]  # the range "1-2" and the empty node "3.1" are skipped
    assert sentence.lemmas == ["de", "el", "país", "."]
    assert sentence.upos == ["ADP", "DET", "NOUN", "PUNCT"]
    assert sentence.xpos == ["SP", "DA", "NC", "Fp"]
    assert sentence.feats == ["", "Definite=Def", "Gender=Masc|Number=Sing", ""]
    assert sentence.heads == [2, 2, 2, 2]  # 0-based; the root's head is itself
    assert sentence.deprels == ["case", "det", "root", "punct"]
    # "del" has SpaceAfter=No on its range line: no space inside it, nor after its last word
    assert sentence.spaces == [False, False, False, True]


def test_comments_before_a_sentence_belong_to_it_and_blank_lines_separate(tmp_path):
    rows = ["# sent_id = a", "1\tx\tx\tX\t_\t_\t0\troot\t_\t_", "", "", "# sent_id = b", "1\ty\ty\tX\t_\t_\t0\troot\t_\t_", ""]
    assert [(s.sent_id, s.words, s.newdoc) for s in read_conllu(write(tmp_path, rows))] == [("a", ["x"], False), ("b", ["y"], False)]


def test_a_head_that_is_not_a_number_names_the_sentence_and_word(tmp_path):
    rows = ["# sent_id = s9", "1\tx\tx\tX\t_\t_\t0\troot\t_\t_", "2\ty\ty\tX\t_\t_\t_\tdep\t_\t_"]
    path = write(tmp_path, rows)
    with pytest.raises(SpacyElmoError) as err:
        list(read_conllu(path))
    assert str(err.value) == f"{path}: sentence at line 1 (s9): word 2 has head '_', not 0..2"


def test_a_word_index_that_is_not_a_number_is_named(tmp_path):
    path = write(tmp_path, ["1\tx\tx\tX\t_\t_\t0\troot\t_\t_", "x\ty\ty\tX\t_\t_\t1\tdep\t_\t_"])
    with pytest.raises(SpacyElmoError) as err:
        list(read_conllu(path))
    assert str(err.value) == f"{path}:2: word index 'x', expected 2"
