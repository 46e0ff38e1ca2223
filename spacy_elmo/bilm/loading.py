"""`load_bilm`: one entry point for bundled models, native folders and original weights."""
from pathlib import Path
from typing import List, Optional, Union

import torch

from ..runtime import torch_device, torch_dtype
from .errors import BundledModelNotFound, ModelFormatError
from .model import BiLM

PathLike = Union[str, Path]
BUNDLED_DIR = Path(__file__).resolve().parent.parent / "models"
DEFAULT_MODEL = "en_base"


def bundled_models() -> List[str]:
    """Short names of the models shipped inside the package."""
    if not BUNDLED_DIR.is_dir():
        return []
    return sorted(p.name for p in BUNDLED_DIR.iterdir() if (p / "config.json").is_file())


def resolve_model_path(source: Optional[PathLike]) -> Path:
    """The folder or file that `source` names: a bundled short name, a published model's name
    (downloaded into the cache on first use), or a path."""
    from .remote import PUBLISHED, fetch

    if source is None:
        source = DEFAULT_MODEL
    path = Path(source)
    if path.exists():
        return path
    name = str(source)
    if name in PUBLISHED:
        return fetch(name)
    if "/" not in name and "\\" not in name and not path.suffix:
        folder = BUNDLED_DIR / name
        if (folder / "config.json").is_file():
            return folder
        available = ", ".join(bundled_models()) or "none"
        raise BundledModelNotFound(
            f"no model named {name!r} (bundled: {available}; published: {', '.join(PUBLISHED)}); "
            "pass a native model folder, or an original weights .hdf5 with options=OPTIONS.json"
        )
    raise ModelFormatError(f"{source}: no such file or folder")


def load_bilm(
    source: Optional[PathLike] = None,
    *,
    options: Optional[PathLike] = None,
    device: Union[str, torch.device] = "cpu",
    dtype: str = "float32",
) -> BiLM:
    """Load a biLM, in eval mode.

    source (Optional[PathLike]): None for the default bundled model, a bundled model's short
        name, a native model folder, or an original weights hdf5 (with `options`). A folder
        holding ``options.json`` and one ``.hdf5`` file loads as the original format too.
    options (Optional[PathLike]): the ``options.json`` of original weights.
    device (Union[str, torch.device]): where the model runs, e.g. "cpu" or "cuda:0".
    dtype (str): "float32" (default) or "bfloat16" computation.
    RETURNS (BiLM): the model.
    """
    from .efml_format import is_efml_folder, load_efml
    from .native_format import CONFIG_FILE, load_native
    from .original_format import load_original

    target, number_type = torch_device(device), torch_dtype(dtype)
    path = resolve_model_path(source)
    if path.is_dir():
        if is_efml_folder(path):
            if options is not None:
                raise ValueError(f"{path} is an ELMoForManyLangs model folder; options= is only for original hdf5 weights")
            bilm = load_efml(path)
        elif (path / CONFIG_FILE).is_file():
            if options is not None:
                raise ValueError(f"{path} is a native model folder; options= is only for original hdf5 weights")
            bilm = load_native(path)
        else:
            weights = sorted(path.glob("*.hdf5")) + sorted(path.glob("*.h5"))
            if not (path / "options.json").is_file() or len(weights) != 1:
                raise ModelFormatError(
                    f"{path}: neither a native model folder ({CONFIG_FILE}) nor a folder with "
                    "options.json and exactly one .hdf5 weights file"
                )
            bilm = load_original(weights[0], options or path / "options.json")
    else:
        import h5py

        if not h5py.is_hdf5(path):
            raise ModelFormatError(
                f"{path}: not an HDF5 file, so neither original ELMo weights (.hdf5) nor a native "
                "model folder (config.json + model.safetensors)"
            )
        if options is None:
            sibling = path.parent / "options.json"
            if not sibling.is_file():
                raise ModelFormatError(
                    f"{path}: original weights need their options; pass options=PATH/TO/options.json"
                )
            options = sibling
        bilm = load_original(path, options)
    return bilm.to(device=target, dtype=number_type).eval()
