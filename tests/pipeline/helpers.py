"""Shared helpers for the pipeline tests: pipelines with a small biLM (3 layers, width 32)."""
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import spacy
from spacy.language import Language

from spacy_elmo.layers.elmo_model import ElmoModelSettings

# (weights, options): an original .hdf5 and its options.json, or a model's name and None.
ModelFiles = Tuple[Any, Optional[Path]]
MODEL_KEYS = set(ElmoModelSettings.__dataclass_fields__)


def elmo_config(files: Optional[ModelFiles] = None, config: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The elmo component's config: `config`'s model settings go into the model block, with
    the (weights, options) files as its `bilm` and `options`."""
    config = dict(config or {})
    model = {key: config.pop(key) for key in list(config) if key in MODEL_KEYS}
    if files is not None:
        weights, options = files
        model = {"bilm": str(weights), **({"options": str(options)} if options else {}), **model}
    return {**config, "model": model} if model else config


def model_config(files: ModelFiles) -> Dict[str, Any]:
    """The model block of the elmo component for (weights, options) files."""
    return elmo_config(files)


def elmo_nlp(files: ModelFiles, sentencizer: bool = True, config: Optional[Dict[str, Any]] = None) -> Language:
    """A blank English pipeline with (optionally) a sentencizer and an initialized elmo component."""
    nlp = spacy.blank("en")
    if sentencizer:
        nlp.add_pipe("sentencizer")
    nlp.add_pipe("elmo", config=elmo_config(files, config))
    nlp.initialize()
    return nlp
