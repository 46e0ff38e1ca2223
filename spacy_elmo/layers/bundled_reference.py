"""A bundled biLM saved by name: a pipeline whose frozen biLM is one the package ships stores
its name and the sha256 of its weights, not a copy of the weights.

Bundled biLMs never change under their name, so the name and hash pin the weights exactly; a
fine-tuned, re-cast or moved biLM no longer matches its load-time fingerprint and is saved whole.
"""
import json
from pathlib import Path
from typing import Any, Dict, Optional

from ..errors import SpacyElmoError
from ..paths import sha256

MAGIC = b"spacy-elmo bundled biLM\n"
WEIGHTS_FILE = "model.safetensors"
# The attribute of the torch module that holds its reference and load-time fingerprint.
ATTRIBUTE = "bundled_reference"


class BundledReferenceError(SpacyElmoError):
    """A pipeline names a bundled biLM that this installation lacks or ships with other weights."""


def bundled_folder(source: Optional[str]) -> Optional[Path]:
    """The bundled model folder that `source` names (None: the default), else None."""
    from ..bilm.loading import BUNDLED_DIR, resolve_model_path

    try:
        path = resolve_model_path(source).resolve()
    except SpacyElmoError:
        return None
    return path if path.parent == BUNDLED_DIR.resolve() and (path / WEIGHTS_FILE).is_file() else None


def mark(bilm: Any, folder: Path) -> None:
    """Record on `bilm` (as placed for use) that its weights are the bundled model in `folder`."""
    from ..about import __version__
    from ..bilm.model import _weights_version

    reference = {"name": folder.name, "sha256": sha256(folder / WEIGHTS_FILE), "written_by": f"spacy-elmo {__version__}"}
    setattr(bilm, ATTRIBUTE, (reference, _weights_version(bilm)))


def reference_bytes(bilm: Any) -> Optional[bytes]:
    """The reference to save instead of the weights, or None where `bilm` is not (or no longer)
    the bundled model it was loaded from."""
    from ..bilm.model import _weights_version

    marked = getattr(bilm, ATTRIBUTE, None)
    if marked is None or marked[1] != _weights_version(bilm):
        return None
    return MAGIC + json.dumps(marked[0], sort_keys=True).encode("utf8")


def is_reference(data: bytes) -> bool:
    """Whether saved model bytes are a bundled reference."""
    return data.startswith(MAGIC)


def resolve_reference(data: bytes) -> Path:
    """The folder of the bundled biLM a reference names; one clear error where this installation
    lacks it or ships other weights under its name."""
    from ..about import __version__
    from ..bilm.loading import BUNDLED_DIR, bundled_models

    try:
        reference: Dict[str, str] = json.loads(data[len(MAGIC) :].decode("utf8"))
        name, expected, writer = reference["name"], reference["sha256"], reference["written_by"]
    except (ValueError, KeyError, TypeError):
        raise BundledReferenceError("the pipeline's elmo model names a bundled biLM in an unreadable form; save it again") from None
    folder = BUNDLED_DIR / name
    if not (folder / WEIGHTS_FILE).is_file():
        raise BundledReferenceError(
            f"the pipeline needs the bundled biLM {name!r}, which spacy-elmo {__version__} does not ship "
            f"(it has: {', '.join(bundled_models()) or 'none'}); the pipeline was written by {writer}: install that version or newer"
        )
    if sha256(folder / WEIGHTS_FILE) != expected:
        raise BundledReferenceError(
            f"the bundled biLM {name!r} of spacy-elmo {__version__} has other weights than the one the pipeline was "
            f"trained with ({writer}, sha256 {expected[:12]}...); install {writer.replace(' ', '==')}"
        )
    return folder
