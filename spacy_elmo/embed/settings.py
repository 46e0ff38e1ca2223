"""What `embed` does with each line, on either engine: one `EmbedSettings`, checked when made.
The layer choice is made here, once; the engines compute it (`lines.py`) and the writers write it."""
from dataclasses import dataclass, field
from typing import Optional, Sequence

from ..errors import ConfigError
from ..languages import check_language
from ..layer_choice import ALL_LAYERS, LayerChoice, check_layer_choice
from ..layers.elmo_model import ElmoModelSettings
from ..runtime import VECTOR_STORAGE_DTYPES, check_storage_dtype

TOKENIZERS = ("spacy", "whitespace")


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
    layer (Union[int, str]): "all" (n_layers, n_tokens, width), or one layer or a fixed mix
        (n_tokens, width): an index, "top", "average" or "mix" (`mix_weights`, `mix_gamma`), as
        the component's `layer`. The one place the layers are chosen: the writers write them.
    storage_dtype (str): the type the vectors are written in, "float32" or "float16".
    """

    model: ElmoModelSettings = field(default_factory=ElmoModelSettings)
    tokenize: str = "spacy"
    lang: Optional[str] = None
    sentences: bool = False
    layer: LayerChoice = ALL_LAYERS
    mix_weights: Optional[Sequence[float]] = None
    mix_gamma: float = 1.0
    storage_dtype: str = "float32"

    def __post_init__(self) -> None:
        if self.tokenize not in TOKENIZERS:
            raise ConfigError(f"unknown tokenize {self.tokenize!r}; use one of {', '.join(TOKENIZERS)}")
        if self.lang is not None:
            check_language(self.lang)
        check_layer_choice(self.layer, self.mix_weights, self.mix_gamma, allow_all=True)
        check_storage_dtype(self.storage_dtype, choices=VECTOR_STORAGE_DTYPES)
