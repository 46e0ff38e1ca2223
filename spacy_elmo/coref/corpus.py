"""`spacy-elmo.CorefCorpus.v1`: whole documents with their gold tokens, for coreference.

spaCy's own `spacy.Corpus.v1` either re-tokenizes the text (`gold_preproc = false`; the coref
scorers compare token offsets, so a different tokenization scores wrong) or splits documents into
sentences (`gold_preproc = true`; coreference crosses sentences). This reader keeps both: the
predicted doc has the reference's words and spaces and nothing else (sentence boundaries come
from the pipeline, e.g. a sentencizer). For training spacy-experimental's span resolver, it can
copy the gold head clusters onto the predicted doc, as that component reads its input heads there.
"""
from pathlib import Path
from typing import Callable, Iterator, Union

import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from ..errors import SpacyElmoError
from ..registry_names import COREF_CORPUS

DEFAULT_HEAD_PREFIX = "coref_head_clusters"


@spacy.registry.readers(COREF_CORPUS)
def create_coref_corpus(
    path: Union[str, Path],
    copy_heads: bool = False,
    head_prefix: str = DEFAULT_HEAD_PREFIX,
    limit: int = 0,
) -> Callable[[Language], Iterator[Example]]:
    """Read a DocBin of documents with coreference span groups.

    path (Union[str, Path]): the .spacy file.
    copy_heads (bool): copy the span groups `{head_prefix}_N` onto the predicted docs (for
        training `experimental_span_resolver`; leave false for evaluation).
    head_prefix (str): the prefix of the head-cluster span groups.
    limit (int): read only the first N documents (0: all).
    RETURNS (Callable[[Language], Iterator[Example]]): the corpus, as spaCy's readers return it.
    """
    path = Path(path)

    def read(nlp: Language) -> Iterator[Example]:
        if not path.is_file():
            raise SpacyElmoError(f"coref corpus: {path} is not a file (expected a .spacy DocBin)")
        for i, reference in enumerate(DocBin().from_disk(path).get_docs(nlp.vocab)):
            if limit and i >= limit:
                return
            yield Example(gold_tokens_doc(reference, head_prefix if copy_heads else None), reference)

    return read


def gold_tokens_doc(reference: Doc, head_prefix: Union[str, None] = None) -> Doc:
    """A doc with the words and spaces of `reference` only; with `head_prefix`, also a copy of
    each span group `{head_prefix}_N`, in the reference's order."""
    doc = Doc(reference.vocab, words=[t.text for t in reference], spaces=[bool(t.whitespace_) for t in reference])
    if head_prefix is not None:
        for key, group in reference.spans.items():
            if is_cluster_key(head_prefix, key):
                doc.spans[key] = [doc[span.start : span.end] for span in group]
    return doc


def is_cluster_key(prefix: str, key: str) -> bool:
    """Whether `key` is `{prefix}_N` for an integer N (spacy-experimental's convention)."""
    return key.startswith(prefix + "_") and key[len(prefix) + 1 :].isdigit()
