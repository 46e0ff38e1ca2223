"""scripts/convert_gum.py: a mention's head is its highest word in the dependency tree (GUM's
Entity annotation has no head field, where udapi would give the first word)."""
import pytest
import spacy
from spacy.tokens import DocBin

from . import load_script

pytest.importorskip("udapi")

# Two sentences of GUM's CoNLL-U (gum-dev, GUM_academic_exposure), with GUM's global.Entity.
CONLLU = """# newdoc id = GUM_test_heads
# global.Entity = GRP-etype-infstat-salience-centering-minspan-link-identity
# sent_id = GUM_test_heads-1
# text = Previous Research
1	Previous	previous	ADJ	JJ	Degree=Pos	2	amod	2:amod	Entity=(2-abstract-giv:inact-nnnns-cf1-2-coref
2	Research	research	NOUN	NN	Number=Sing	0	root	0:root	Entity=2)

# sent_id = GUM_test_heads-2
# text = The research on the language helps.
1	The	the	DET	DT	_	2	det	2:det	Entity=(2-abstract-giv:act-nnnns-cf1-2-coref
2	research	research	NOUN	NN	Number=Sing	6	nsubj	6:nsubj	_
3	on	on	ADP	IN	_	5	case	5:case	_
4	the	the	DET	DT	_	5	det	5:det	Entity=(3-abstract-new-nnnns-cf2-2-sgl
5	language	language	NOUN	NN	Number=Sing	2	nmod	2:nmod	Entity=3)2)
6	helps	help	VERB	VBZ	_	0	root	0:root	SpaceAfter=No
7	.	.	PUNCT	.	_	6	punct	6:punct	_

"""


@pytest.fixture(scope="module")
def convert_gum():
    return load_script("convert_gum")


def test_heads_are_the_highest_words_of_the_mentions(convert_gum, tmp_path):
    source = tmp_path / "gum-dev.conllu"
    source.write_text(CONLLU, encoding="utf8")
    docs, _, chains, mentions, _ = convert_gum.convert(source, tmp_path / "dev.spacy", limit_docs=0)
    assert (docs, chains, mentions) == (1, 1, 2)
    (doc,) = DocBin().from_disk(tmp_path / "dev.spacy").get_docs(spacy.blank("en").vocab)
    assert [span.text for span in doc.spans["coref_clusters_1"]] == ["Previous Research", "The research on the language"]
    assert [span.text for span in doc.spans["coref_head_clusters_1"]] == ["Research", "research"]


def test_singletons_keep_their_heads_too(convert_gum, tmp_path):
    source = tmp_path / "gum-dev.conllu"
    source.write_text(CONLLU, encoding="utf8")
    convert_gum.convert(source, tmp_path / "dev.spacy", limit_docs=0, min_mentions=1)
    (doc,) = DocBin().from_disk(tmp_path / "dev.spacy").get_docs(spacy.blank("en").vocab)
    heads = {doc.spans[key][0].text for key in doc.spans if key.startswith("coref_head_clusters")}
    assert heads == {"Research", "language"}
