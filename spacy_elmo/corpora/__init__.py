"""Annotated corpora as spaCy docs: UD CoNLL-U treebanks and UNER IOB2 named entities."""
from .conllu import Sentence, read_conllu
from .iob2 import NerSentence, read_iob2
from .docs import corpus_docs

__all__ = ["Sentence", "read_conllu", "NerSentence", "read_iob2", "corpus_docs"]
