"""UD CoNLL-U and UNER IOB2 files as spaCy docs: every annotation, entity matching, bad input."""
import gzip
from pathlib import Path

import pytest
import spacy

from spacy_elmo.corpora import corpus_docs, read_conllu, read_iob2
from spacy_elmo.errors import SpacyElmoError

CONLLU = """# newdoc id = d1
# sent_id = d1-1
# text = Bush went home.
1	Bush	Bush	PROPN	NNP	Number=Sing	2	nsubj	_	_
2	went	go	VERB	VBD	Tense=Past	0	root	_	_
3	home	home	ADV	RB	_	2	advmod	_	SpaceAfter=No
4	.	.	PUNCT	.	_	2	punct	_	_

# sent_id = d1-2
# text = I'm here.
1-2	I'm	_	_	_	_	_	_	_	_
1	I	I	PRON	PRP	Case=Nom	3	nsubj	_	_
2	'm	be	AUX	VBP	_	3	cop	_	_
3	here	here	ADV	RB	_	0	root	_	SpaceAfter=No
4	.	.	PUNCT	.	_	3	punct	_	_

# newdoc id = d2
# sent_id = d2-1
# text = Paris.
1	Paris	Paris	PROPN	NNP	_	0	root	_	SpaceAfter=No
2	.	.	PUNCT	.	_	1	punct	_	_

"""

IOB2 = """# sent_id = d1-1
# text = Bush went home.
1	Bush	B-PER	-	-
2	went	O	-	-
3	home	O	-	-
4	.	O	-	-

# sent_id = d2-1
# text = Paris.
1	Paris	B-LOC	-	-
2	.	O	-	-

# sent_id = d1-2
# text = I'm here.
1	I'm	O	-	-
2	here	O	-	-
3	.	O	-	-

"""


@pytest.fixture
def files(tmp_path: Path):
    conllu = tmp_path / "ud.conllu.gz"
    with gzip.open(conllu, "wt", encoding="utf8") as file:
        file.write(CONLLU)
    iob2 = tmp_path / "ner.iob2"
    iob2.write_text(IOB2, encoding="utf8")
    return conllu, iob2


def test_conllu_sentences_keep_syntactic_words(files):
    sentences = list(read_conllu(files[0]))
    assert [s.sent_id for s in sentences] == ["d1-1", "d1-2", "d2-1"]
    assert [s.newdoc for s in sentences] == [True, False, True]
    assert sentences[1].words == ["I", "'m", "here", "."]  # the multiword token's range is skipped
    assert sentences[1].spaces == [False, True, False, True]  # its space comes from the range line
    assert sentences[0].heads == [1, 1, 1, 1] and sentences[0].spaces == [True, True, False, True]


def test_docs_carry_every_annotation(files):
    vocab = spacy.blank("en").vocab
    docs, counts = corpus_docs(vocab, files[0], ner=files[1])
    assert counts == {"sentences": 3, "words": 10, "docs": 3, "entities": 2, "sentences without entity annotation": 1}
    doc = docs[0]
    assert doc.text == "Bush went home."
    assert [t.lemma_ for t in doc] == ["Bush", "go", "home", "."]
    assert [t.pos_ for t in doc] == ["PROPN", "VERB", "ADV", "PUNCT"]
    assert [t.tag_ for t in doc] == ["NNP", "VBD", "RB", "."]
    assert str(doc[1].morph) == "Tense=Past" and str(doc[2].morph) == ""
    assert [(t.dep_, t.head.i) for t in doc] == [("nsubj", 1), ("ROOT", 1), ("advmod", 1), ("punct", 1)]
    assert [(e.text, e.label_) for e in doc.ents] == [("Bush", "PER")]
    # d1-2's words differ from the IOB2 file's ("I'm" unsplit): no entity annotation, not "O".
    assert all(t.ent_iob == 0 for t in docs[1])
    assert [(e.text, e.label_) for e in docs[2].ents] == [("Paris", "LOC")]


def test_sentences_group_within_documents(files):
    docs, counts = corpus_docs(spacy.blank("en").vocab, files[0], n_sents=10)
    assert counts["docs"] == 2  # d1's two sentences, then d2: a group never crosses `# newdoc`
    assert [len(list(doc.sents)) for doc in docs] == [2, 1]
    assert docs[0][5].head.i == 6  # heads are offset by the sentence's start


def test_iob2_alone_gives_ner_docs(files):
    docs, counts = corpus_docs(spacy.blank("en").vocab, files[1])
    assert counts["entities"] == 2 and docs[2].text == "I'm here."
    assert [s.sent_id for s in read_iob2(files[1])] == ["d1-1", "d2-1", "d1-2"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("1\tBush\tBush\tPROPN\n", "ud.conllu:1: expected 10 tab-separated CoNLL-U columns, got 4"),
        ("2\tBush\tBush\tPROPN\tNNP\t_\t0\troot\t_\t_\n", "ud.conllu:1: word index '2', expected 1"),
        ("1\tBush\tBush\tPROPN\tNNP\t_\t7\troot\t_\t_\n", "word 1 has head '7', not 0..1"),
    ],
)
def test_bad_conllu_names_file_and_line(tmp_path: Path, text: str, message: str):
    path = tmp_path / "ud.conllu"
    path.write_text(text, encoding="utf8")
    with pytest.raises(SpacyElmoError, match=message.replace(".", r"\.").replace("(", r"\(")):
        corpus_docs(spacy.blank("en").vocab, path)


def test_bad_input_is_one_clear_error(tmp_path: Path, files):
    vocab = spacy.blank("en").vocab
    bad = tmp_path / "ner.iob2"
    bad.write_text("# sent_id = a\n1\tBush\tPERSON\n", encoding="utf8")
    with pytest.raises(SpacyElmoError, match=r"ner\.iob2:2: expected 'index<TAB>token<TAB>IOB2 tag'"):
        corpus_docs(vocab, bad)
    with pytest.raises(SpacyElmoError, match="expected a .conllu or .iob2 file"):
        corpus_docs(vocab, tmp_path / "train.txt")
    with pytest.raises(SpacyElmoError, match="no such file"):
        corpus_docs(vocab, tmp_path / "missing.conllu")
    other = tmp_path / "other.iob2"
    other.write_text("# sent_id = x\n1\tHello\tO\n", encoding="utf8")
    with pytest.raises(SpacyElmoError, match="no sentence matches the CoNLL-U file"):
        corpus_docs(vocab, files[0], ner=other)
    latin1 = tmp_path / "latin1.conllu"
    latin1.write_bytes("1\tcaf\xe9\n".encode("latin-1"))
    with pytest.raises(SpacyElmoError, match="latin1.conllu:1: not UTF-8"):
        corpus_docs(vocab, latin1)
