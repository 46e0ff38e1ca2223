"""UNER IOB2 files: sentences, tags, the spaces recovered from `# text`, and bad rows."""
import gzip

import pytest

from spacy_elmo.corpora.iob2 import NerSentence, read_iob2
from spacy_elmo.errors import SpacyElmoError


def test_sentences_words_tags_and_comments(tmp_path):
    path = tmp_path / "ner.iob2.gz"
    with gzip.open(path, "wt", encoding="utf8") as file:
        # no blank line at the end: the last sentence is still read; extra columns are ignored
        file.write("# sent_id = s1\n# text = New York.\n1\tNew\tB-LOC\n2\tYork\tI-LOC\t-\n3\t.\tO\n\n\n2\tHi\tO")
    first, second = read_iob2(path)
    assert (first.sent_id, first.text, first.words, first.tags) == ("s1", "New York.", ["New", "York", "."], ["B-LOC", "I-LOC", "O"])
    assert (second.sent_id, second.text, second.words, second.tags) == (None, "", ["Hi"], ["O"])


@pytest.mark.parametrize(
    "row",
    ["1\tBush\n", "1\tBush\tPER\n", "1\tBush\tb-PER\n", "1 Bush B-PER\n"],
)
def test_a_row_without_an_iob2_tag_names_file_and_line(tmp_path, row):
    path = tmp_path / "ner.iob2"
    path.write_text("# sent_id = a\n1\tok\tO\n" + row, encoding="utf8")
    with pytest.raises(SpacyElmoError) as err:
        list(read_iob2(path))
    assert str(err.value) == f"{path}:3: expected 'index<TAB>token<TAB>IOB2 tag', got {row.rstrip(chr(10))!r}"


def test_spaces_follow_the_text_line():
    sentence = NerSentence("a", text="I'm  here, ok", words=["I", "'m", "here", ",", "ok"])
    assert sentence.spaces() == [False, True, False, True, False]


def test_spaces_are_all_true_where_the_words_are_not_in_the_text_in_order():
    assert NerSentence("a", text="New York", words=["York", "New"]).spaces() == [True, True]
    assert NerSentence("a", text="cannot", words=["can", "not!"]).spaces() == [True, True]
    assert NerSentence("a", text="a b", words=["a", "x", "b"]).spaces() == [True, True, True]
    assert NerSentence("a", words=["no", "text"]).spaces() == [True, True]
