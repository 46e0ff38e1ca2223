"""Lines of text in, tokens and biLM layers out: what both engines of `embed` run.

The single-process engine and each Ray worker hold one `LineEmbedder`; it tokenizes with spaCy
(or on whitespace) and runs `spacy-elmo.ElmoModel.v1` on the docs, so a line's vectors are the
ones the `elmo` component gives it: stateless, in length-sorted batches bounded by
`batch_size` and `max_tokens`, long sentences cut into the model's windows.
"""
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .errors import SpacyElmoError
from .layers.elmo_model import ElmoModelSettings

TOKENIZERS = ("spacy", "whitespace")
Embedded = Tuple[List[str], np.ndarray]


class LineEmbedder:
    """Tokens and all biLM layers (n_layers, n_tokens, width), float32, of lines of text.

    settings (ElmoModelSettings): the biLM and how it runs (batch size, token budget, device, dtype).
    tokenize (str): "spacy" (the tokenizer of `lang`, as the component sees text) or
        "whitespace" (as the original tools).
    lang (Optional[str]): the spaCy language of the tokenizer and sentencizer (default: the
        model's, else "en").
    sentences (bool): read each line sentence by sentence (spaCy's sentencizer).
    """

    def __init__(self, settings: ElmoModelSettings, tokenize: str = "spacy", lang: Optional[str] = None, sentences: bool = False) -> None:
        import spacy

        from .bilm.model_info import model_language, read_model_info
        from .layers.elmo_model import build_elmo_model

        if tokenize not in TOKENIZERS:
            raise SpacyElmoError(f"unknown tokenize {tokenize!r}; use one of {', '.join(TOKENIZERS)}")
        self.tokenize = tokenize
        self.nlp = spacy.blank(model_language(read_model_info(settings.bilm), lang))
        if sentences:
            self.nlp.add_pipe("sentencizer")
        self.model = build_elmo_model(settings)
        self.model.initialize()

    @property
    def n_layers(self) -> int:
        return self.model.get_dim("n_layers")

    @property
    def width(self) -> int:
        return self.model.get_dim("nO")

    def __call__(self, lines: Sequence[str]) -> List[Embedded]:
        """Per line, its tokens and its layers; a blank line has no tokens."""
        from spacy.tokens import Doc

        inputs = [Doc(self.nlp.vocab, words=line.split()) for line in lines] if self.tokenize == "whitespace" else lines
        docs = list(self.nlp.pipe(inputs))
        layers = [self.model.ops.to_numpy(array) for array in self.model.predict(docs)] if docs else []
        return [([token.text for token in doc], array) for doc, array in zip(docs, layers)]
