"""The ELMo biLM in pure PyTorch: no spaCy import here."""
from .config import BiLMConfig
from .errors import BundledModelNotFound, ModelDownloadError, ModelFormatError
from .loading import bundled_models, load_bilm
from .model import BiLM
from .native_format import bilm_from_bytes, bilm_to_bytes, save_bilm
from .original_format import export_original, load_original

__all__ = [
    "BiLM",
    "BiLMConfig",
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
