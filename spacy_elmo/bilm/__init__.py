"""The ELMo biLM in pure PyTorch: no spaCy import here."""
from ..dependencies import require

require("torch", "spacy_elmo.bilm (the biLM in PyTorch)")

from .architecture import BiLMArchitecture  # noqa: E402
from .errors import BundledModelNotFound, ModelDownloadError, ModelFormatError  # noqa: E402
from .loading import bundled_models, load_bilm  # noqa: E402
from .model import BiLM  # noqa: E402
from .native_format import bilm_from_bytes, bilm_to_bytes, save_bilm  # noqa: E402
from .original_format import export_original, load_original  # noqa: E402

__all__ = [
    "BiLM",
    "BiLMArchitecture",
    "BundledModelNotFound",
    "ModelDownloadError",
    "ModelFormatError",
    "bilm_from_bytes",
    "bilm_to_bytes",
    "bundled_models",
    "export_original",
    "load_bilm",
    "load_original",
    "save_bilm",
]
