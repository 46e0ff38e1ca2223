"""spacy-elmo: ELMo contextual embeddings for spaCy v3 pipelines."""
from typing import Any

__version__ = "0.1.0"
__all__ = ["load_bilm", "__version__"]


def load_bilm(*args: Any, **kwargs: Any) -> Any:
    """Load a biLM; see `spacy_elmo.bilm.load_bilm` (imported lazily to keep `import spacy` cheap)."""
    from .bilm import load_bilm as _load_bilm

    return _load_bilm(*args, **kwargs)
