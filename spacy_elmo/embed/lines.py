"""Lines of text in, tokens and biLM layers out: what both engines of `embed` run.

The local engine (`local.py`) and each Ray worker (`ray_data/embed.py`) hold one
`LineEmbedder`, made from one `EmbedSettings` (`settings.py`); it tokenizes with spaCy (or on
whitespace) and runs the ELMo model block on the docs, so a line's vectors are the ones the
`elmo` component gives it: stateless, in length-sorted batches bounded by `batch_size` and
`max_tokens`, long sentences cut into the model's windows; then keeps the settings' `layer`.
"""
from typing import List, Sequence, Tuple

import numpy as np

from ..languages import check_language
from ..layer_choice import ALL_LAYERS, layer_coefficients, select_layers
from .settings import EmbedSettings

Embedded = Tuple[List[str], np.ndarray]


class LineEmbedder:
    """Tokens and the chosen biLM layers, float32, of lines of text (see `EmbedSettings`)."""

    def __init__(self, settings: EmbedSettings) -> None:
        import spacy

        from ..bilm.model_info import model_language, read_model_info
        from ..layers.elmo_model import build_elmo_model

        self.settings = settings
        self.nlp = spacy.blank(check_language(model_language(read_model_info(settings.model.bilm), settings.lang)))
        if settings.sentences:
            self.nlp.add_pipe("sentencizer")
        self.model = build_elmo_model(settings.model)
        self.model.initialize()
        all_layers = settings.layer == ALL_LAYERS
        self.coefficients = None if all_layers else layer_coefficients(settings.layer, self.n_layers, settings.mix_weights, settings.mix_gamma)

    @property
    def n_layers(self) -> int:
        return self.model.get_dim("n_layers")

    @property
    def width(self) -> int:
        return self.model.get_dim("nO")

    def __call__(self, lines: Sequence[str]) -> List[Embedded]:
        """Per line, its tokens and its layers; a blank line has no tokens."""
        from spacy.tokens import Doc

        whitespace = self.settings.tokenize == "whitespace"
        inputs = [Doc(self.nlp.vocab, words=line.split()) for line in lines] if whitespace else lines
        docs = list(self.nlp.pipe(inputs))
        layers = [self.model.ops.to_numpy(array) for array in self.model.predict(docs)] if docs else []
        return [([token.text for token in doc], select_layers(array, self.coefficients)) for doc, array in zip(docs, layers)]


def nothing_to_embed(sources: Sequence[str]) -> str:
    """The one message of both engines for inputs without a line."""
    return f"{', '.join(map(str, sources))} {'is' if len(sources) == 1 else 'are'} empty: nothing to embed"
