"""spacy-elmo: ELMo contextual embeddings for spaCy v3 pipelines."""
from typing import Any

from .about import __version__
__all__ = ["learned_mixes", "load_bilm", "__version__"]


def load_bilm(*args: Any, **kwargs: Any) -> Any:
    """Load a biLM; see `spacy_elmo.bilm.load_bilm` (imported lazily to keep `import spacy` cheap)."""
    from .bilm import load_bilm as _load_bilm

    return _load_bilm(*args, **kwargs)


def learned_mixes(nlp: Any) -> Any:
    """The layer mix each component of a trained pipeline learned; see
    `spacy_elmo.layers.layer_mix.learned_mixes`."""
    from .layers.layer_mix import learned_mixes as _learned_mixes

    return _learned_mixes(nlp)
