"""Lines of text in, tokens and biLM layers out: what both engines of `embed` run.

The local engine (`local_embed.py`) and each Ray worker (`ray_data/embed.py`) hold one
`LineEmbedder`, made from one `EmbedSettings`; it tokenizes with spaCy (or on whitespace) and
runs `spacy-elmo.ElmoModel.v1` on the docs, so a line's vectors are the ones the `elmo`
component gives it: stateless, in length-sorted batches bounded by `batch_size` and
`max_tokens`, long sentences cut into the model's windows.
"""
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .errors import ConfigError
from .languages import check_language
from .layer_choice import ALL_LAYERS, LayerChoice, check_layer_choice, layer_coefficients, select_layers
from .layers.elmo_model import ElmoModelSettings
from .runtime import VECTOR_STORAGE_DTYPES, check_storage_dtype

TOKENIZERS = ("spacy", "whitespace")
Embedded = Tuple[List[str], np.ndarray]


@dataclass(frozen=True)
class EmbedSettings:
    """What `embed` does with each line, on either engine; checked when made.

    model (ElmoModelSettings): the biLM and how it runs (batch size, token budget, device,
        compute dtype).
    tokenize (str): "spacy" (the tokenizer of `lang`, as the component sees text) or
        "whitespace" (as the original tools).
    lang (Optional[str]): the spaCy language of the tokenizer and sentencizer (default: the
        model's, else "en").
    sentences (bool): read each line sentence by sentence (spaCy's sentencizer).
    layers (Union[int, str]): "all" (n_layers, n_tokens, width), or one layer or a fixed mix
        (n_tokens, width): an index, "top", "average" or "mix" (`mix_weights`, `mix_gamma`).
    storage_dtype (str): the type the vectors are written in, "float32" or "float16".
    """

    model: ElmoModelSettings = field(default_factory=ElmoModelSettings)
    tokenize: str = "spacy"
    lang: Optional[str] = None
    sentences: bool = False
    layers: LayerChoice = ALL_LAYERS
    mix_weights: Optional[Sequence[float]] = None
    mix_gamma: float = 1.0
    storage_dtype: str = "float32"

    def __post_init__(self) -> None:
        if self.tokenize not in TOKENIZERS:
            raise ConfigError(f"unknown tokenize {self.tokenize!r}; use one of {', '.join(TOKENIZERS)}")
        if self.lang is not None:
            check_language(self.lang)
        check_layer_choice(self.layers, self.mix_weights, self.mix_gamma, allow_all=True, name="layers")
        check_storage_dtype(self.storage_dtype, choices=VECTOR_STORAGE_DTYPES)


class LineEmbedder:
    """Tokens and the chosen biLM layers, float32, of lines of text (see `EmbedSettings`)."""

    def __init__(self, settings: EmbedSettings) -> None:
        import spacy

        from .bilm.model_info import model_language, read_model_info
        from .layers.elmo_model import build_elmo_model

        self.settings = settings
        self.nlp = spacy.blank(check_language(model_language(read_model_info(settings.model.bilm), settings.lang)))
        if settings.sentences:
            self.nlp.add_pipe("sentencizer")
        self.model = build_elmo_model(settings.model)
        self.model.initialize()
        all_layers = settings.layers == ALL_LAYERS
        self.coefficients = None if all_layers else layer_coefficients(settings.layers, self.n_layers, settings.mix_weights, settings.mix_gamma, "layers")

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
