"""A tiny trained pipeline for the runtime tests: the elmo component on the bundled `en_base`, and
a tagger, a parser and NER that listen to it, after 30 training steps on two sentences (under a
second: the frozen biLM's features are cached), enough for tags, arcs and entities to vary."""
from pathlib import Path
from typing import Any, Dict, List

import spacy
from spacy.language import Language
from spacy.tokens import DocBin
from spacy.training import Example

STEPS = 30
LISTENER = {"@architectures": "spacy-elmo.ElmoListener.v1", "width": 16, "upstream": "elmo"}
# (text, annotations): tags, a dependency tree (heads by index) and entities, one per token.
ANNOTATED = [
    (
        "Apple is looking at buying a startup in London .",
        {
            "tags": ["NNP", "VBZ", "VBG", "IN", "VBG", "DT", "NN", "IN", "NNP", "."],
            "heads": [2, 2, 2, 2, 3, 6, 4, 6, 7, 2],
            "deps": ["nsubj", "aux", "ROOT", "prep", "pcomp", "det", "dobj", "prep", "pobj", "punct"],
            "entities": ["U-ORG", "O", "O", "O", "O", "O", "O", "O", "U-GPE", "O"],
        },
    ),
    (
        "We saw a play in Paris .",
        {
            "tags": ["PRP", "VBD", "DT", "NN", "IN", "NNP", "."],
            "heads": [1, 1, 3, 1, 1, 4, 1],
            "deps": ["nsubj", "ROOT", "det", "dobj", "prep", "pobj", "punct"],
            "entities": ["O", "O", "O", "O", "O", "U-GPE", "O"],
        },
    ),
]
TEXTS = [
    "Apple is looking at buying a startup in London.",
    "We saw a play. Let us play chess in Paris.",
    "Google opened an office in Berlin last year.",
]


def examples(nlp: Language) -> List[Example]:
    return [Example.from_dict(nlp.make_doc(text), annotations) for text, annotations in ANNOTATED]


def train_tiny_pipeline(path: Path) -> Path:
    """Train the pipeline and save it at `path`."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": "en_base"}})
    nlp.add_pipe("tagger", config={"model": {"tok2vec": dict(LISTENER)}})
    nlp.add_pipe("parser", config={"model": {"tok2vec": dict(LISTENER)}, "min_action_freq": 1})  # every label, from 2 sentences
    nlp.add_pipe("ner", config={"model": {"tok2vec": dict(LISTENER)}})
    optimizer = nlp.initialize(lambda: examples(nlp))
    for _ in range(STEPS):
        nlp.update(examples(nlp), sgd=optimizer)
    nlp.to_disk(path)
    return path


def write_test_set(path: Path) -> Path:
    """The annotated sentences as a .spacy file."""
    nlp = spacy.blank("en")
    DocBin(docs=[eg.reference for eg in examples(nlp)]).to_disk(path)
    return path


def annotations(nlp: Language, texts: List[str] = TEXTS) -> Dict[str, Any]:
    """Everything but the ELMo features that the pipeline sets on `texts`."""
    docs = list(nlp.pipe(texts))
    return {
        "tags": [[t.tag_ for t in doc] for doc in docs],
        "deps": [[(t.dep_, t.head.i) for t in doc] for doc in docs],
        "ents": [[(e.start, e.end, e.label_) for e in doc.ents] for doc in docs],
    }


def features(nlp: Language, texts: List[str] = TEXTS) -> List[Any]:
    """`doc._.elmo` of each text."""
    return [doc._.elmo for doc in nlp.pipe(texts)]
