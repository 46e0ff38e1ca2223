"""Pipelines on either runtime for the ONNX Runtime tests: a tiny saved biLM (tests/conftest.py's
TINY_CONFIG, 3 layers of 16), a sentencizer, the elmo component and, optionally, a tagger that
listens to it."""
from pathlib import Path
from typing import Any, Dict, List

import spacy
from spacy.language import Language
from spacy.training import Example

from spacy_elmo.bilm import BiLMArchitecture, save_bilm

from ..conftest import TINY_CONFIG, random_bilm

TEXTS = [
    "The cat sat on the mat. It was happy.",
    "",
    "  ",
    "One",
    "Emoji 😀 and 中文. Done!",
    "A  spaced \n doc with a rather long sentence that goes on and on over many more words than the window .",
]
TAGGED = [("The cat sat .", ["DET", "NOUN", "VERB", "PUNCT"]), ("A dog ran .", ["DET", "NOUN", "VERB", "PUNCT"])]


def save_tiny_bilm(folder: Path, config: BiLMArchitecture = TINY_CONFIG) -> Path:
    """A random biLM saved as a native model folder."""
    return save_bilm(random_bilm(config), folder)


def elmo_pipeline(bilm: Path, runtime: str = "onnxruntime", tagger: bool = False, **model: Any) -> Language:
    """An initialized pipeline: sentencizer, elmo on `runtime` (model block settings `model`), and
    with `tagger` a tagger whose tok2vec listens to it."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    block: Dict[str, Any] = {"bilm": str(bilm), "runtime": runtime, **model}
    nlp.add_pipe("elmo", config={"model": block})
    if tagger:
        listener = {"@architectures": "spacy-elmo.ElmoListener.v1", "width": 8, "upstream": "elmo"}
        nlp.add_pipe("tagger", config={"model": {"@architectures": "spacy.Tagger.v2", "nO": None, "tok2vec": listener}})
    nlp.initialize(lambda: [Example.from_dict(nlp.make_doc(text), {"tags": tags}) for text, tags in TAGGED])
    return nlp


def layers(nlp: Language, texts: List[str] = TEXTS) -> List[Any]:
    """`doc._.elmo` of each text."""
    return [doc._.elmo for doc in nlp.pipe(texts)]
