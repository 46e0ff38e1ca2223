"""Shared helpers for the pipeline tests: pipelines with the tiny fixture biLM (3 layers, width 32)."""
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import spacy
from spacy.language import Language

ModelFiles = Tuple[Path, Path]


def model_config(files: ModelFiles) -> Dict[str, str]:
    """`model` and `options` of the elmo component for (weights, options) files."""
    weights, options = files
    return {"model": str(weights), "options": str(options)}


def elmo_nlp(files: ModelFiles, sentencizer: bool = True, config: Optional[Dict[str, Any]] = None) -> Language:
    """A blank English pipeline with (optionally) a sentencizer and an initialized elmo component."""
    nlp = spacy.blank("en")
    if sentencizer:
        nlp.add_pipe("sentencizer")
    nlp.add_pipe("elmo", config={**model_config(files), **(config or {})})
    nlp.initialize()
    return nlp
