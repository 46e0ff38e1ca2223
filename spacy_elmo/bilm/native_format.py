"""The native format: a folder with ``config.json`` and ``model.safetensors`` (no pickle)."""
import json
import struct
import warnings
from pathlib import Path
from typing import Any, Dict, Optional

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_safetensors_bytes
from safetensors.torch import load_file, save, save_file

from ..paths import PathLike
from ..runtime import STORAGE_DTYPES
from .architecture import BiLMArchitecture
from .errors import ModelFormatError
from .json_file import read_json_file
from .model import BiLM
from .vocab_file import VOCAB_FILE, read_vocab, write_vocab

FORMAT_NAME = "spacy-elmo"
FORMAT_VERSION = 1
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
# "float16-softmax": float32 for everything that computes the embeddings, float16 for the
# softmax alone (it only scores language-model predictions), so embeddings stay exact.
FLOAT16_SOFTMAX = "float16-softmax"


def save_bilm(bilm: BiLM, folder: PathLike, storage_dtype: Optional[str] = None) -> Path:
    """Write `bilm` to `folder`; `storage_dtype` ("float16", "bfloat16", or "float16-softmax":
    only the softmax in float16) stores the weights in a smaller type; they load as float32.

    RETURNS (Path): the folder.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    header = _header(bilm, storage_dtype)
    save_file(_tensors(bilm, storage_dtype), str(folder / WEIGHTS_FILE))
    (folder / CONFIG_FILE).write_text(json.dumps(header, indent=2), encoding="utf-8")
    if bilm.vocab is not None:
        write_vocab(folder / VOCAB_FILE, bilm.vocab)
    return folder


def load_native(folder: PathLike) -> BiLM:
    """Load a biLM saved with `save_bilm`."""
    folder = Path(folder)
    config_path = folder / CONFIG_FILE
    if not config_path.is_file():
        raise ModelFormatError(f"{folder}: not a spacy-elmo model folder ({CONFIG_FILE} not found)")
    header = read_json_file(config_path)
    weights_path = folder / WEIGHTS_FILE
    if not weights_path.is_file():
        raise ModelFormatError(f"{folder}: weights file {WEIGHTS_FILE} not found")
    try:
        tensors = load_file(str(weights_path))
    except (SafetensorError, OSError, ValueError) as err:
        raise ModelFormatError(f"{weights_path}: not a readable safetensors file ({err})") from None
    vocab = None
    if (folder / VOCAB_FILE).is_file():
        vocab = read_vocab(folder / VOCAB_FILE, ModelFormatError)
    return _build(header, tensors, vocab, str(config_path))


def bilm_to_bytes(bilm: BiLM, storage_dtype: Optional[str] = None) -> bytes:
    """Serialize a biLM to bytes: safetensors, with the config and vocabulary in its metadata.

    storage_dtype (Optional[str]): as for `save_bilm`; None: float32.
    """
    header = _header(bilm, storage_dtype)
    metadata = {"config": json.dumps(header)}
    if bilm.vocab is not None:
        metadata["vocab"] = json.dumps(bilm.vocab)
    return save(_tensors(bilm, storage_dtype), metadata=metadata)


def bilm_from_bytes(data: bytes) -> BiLM:
    """Load a biLM serialized with `bilm_to_bytes`."""
    try:
        tensors = load_safetensors_bytes(data)
        (size,) = struct.unpack("<Q", data[:8])
        metadata = json.loads(data[8 : 8 + size])["__metadata__"]
        header = json.loads(metadata["config"])
    except (SafetensorError, struct.error, ValueError, KeyError) as err:
        raise ModelFormatError(f"not a serialized spacy-elmo biLM ({err})") from None
    vocab = json.loads(metadata["vocab"]) if "vocab" in metadata else None
    return _build(header, tensors, vocab, "serialized biLM")


def _header(bilm: BiLM, dtype: Optional[str]) -> Dict[str, Any]:
    if dtype is not None and dtype not in STORAGE_DTYPES:
        raise ModelFormatError(f"unknown storage dtype {dtype!r}; expected one of {', '.join(STORAGE_DTYPES)}")
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "storage_dtype": dtype or "float32",
        "options": bilm.config.to_options_json(),
    }


def _tensors(bilm: BiLM, dtype: Optional[str]) -> Dict[str, torch.Tensor]:
    def target(name: str) -> torch.dtype:
        if dtype == FLOAT16_SOFTMAX:
            return torch.float16 if name.startswith("softmax.") else torch.float32
        return getattr(torch, dtype or "float32")

    return {name: t.detach().to("cpu", target(name)).contiguous() for name, t in bilm.state_dict().items()}


def _build(header: Dict[str, Any], tensors: Dict[str, torch.Tensor], vocab: Optional[list], source: str) -> BiLM:
    if header.get("format") != FORMAT_NAME or header.get("format_version") != FORMAT_VERSION:
        raise ModelFormatError(
            f"{source}: format {header.get('format')!r} version {header.get('format_version')!r} "
            f"is not {FORMAT_NAME!r} version {FORMAT_VERSION}"
        )
    config = BiLMArchitecture.from_options_json(header.get("options"), source=source)
    bilm = BiLM(config)
    if "softmax.weight" in tensors:
        if vocab is None:
            # Features do not need the softmax; perplexities do, and say so (no softmax).
            warnings.warn(f"{source}: no {VOCAB_FILE} for the softmax, so it is left out: the model gives features, not perplexities")
            tensors = {name: t for name, t in tensors.items() if not name.startswith("softmax.")}
        elif len(vocab) != tensors["softmax.weight"].shape[0]:
            raise ModelFormatError(f"{source}: {VOCAB_FILE} has {len(vocab):,} words for a softmax of {tensors['softmax.weight'].shape[0]:,}")
        else:
            bilm.set_softmax(vocab)
    expected = bilm.state_dict()
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        raise ModelFormatError(
            f"{source}: weights do not match the config: missing {missing[:3]}, unexpected {unexpected[:3]}"
        )
    for name, tensor in tensors.items():
        if tuple(tensor.shape) != tuple(expected[name].shape):
            raise ModelFormatError(
                f"{source}: tensor '{name}' has shape {tuple(tensor.shape)}, the config gives "
                f"{tuple(expected[name].shape)}"
            )
        if not torch.isfinite(tensor).all():
            raise ModelFormatError(f"{source}: tensor '{name}' holds NaN or infinite values")
    bilm.load_state_dict({name: t.float() for name, t in tensors.items()})
    bilm.eval()
    return bilm
