"""`load_bilm`: one entry point for bundled and published models, native folders, original
weights, ELMoForManyLangs folders and model archives."""
import tempfile
from pathlib import Path
from typing import List, Optional, Union

import torch

from ..paths import PathLike
from ..runtime import check_compute_dtype, torch_device
from .errors import BundledModelNotFound, ModelFormatError
from .model import BiLM

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "models"
DEFAULT_MODEL = "en_base_v2"


def bundled_models() -> List[str]:
    """Short names of the models shipped inside the package."""
    if not BUNDLED_DIR.is_dir():
        return []
    return sorted(p.name for p in BUNDLED_DIR.iterdir() if (p / "config.json").is_file())


def check_model_source(source: Optional[PathLike]) -> None:
    """Raise the error `resolve_model_path` would raise for `source`, without a download: a
    published name is taken as it is."""
    from .published import PUBLISHED

    if str(source) not in PUBLISHED or Path(str(source)).exists():
        resolve_model_path(source)


def resolve_model_path(source: Optional[PathLike]) -> Path:
    """The folder or file that `source` names: a bundled short name, a published model's name
    (downloaded into the cache on first use), or a path."""
    from .published import PUBLISHED
    from .remote import fetch

    if source is None:
        source = DEFAULT_MODEL
    if not isinstance(source, (str, Path)):
        raise ModelFormatError(f"a model is a name, folder or file path (str or Path), not {type(source).__name__} {source!r}")
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
            f"no model named {name!r} (bundled: {available}; `python -m spacy_elmo models` lists the published names); "
            "pass a native model folder, or an original weights .hdf5 with options=OPTIONS.json"
        )
    raise ModelFormatError(f"{source}: no such file or folder")


def check_options(source: Optional[PathLike], options: Optional[PathLike]) -> None:
    """Refuse `options` for a model that holds its own architecture (bundled, native or
    ELMoForManyLangs folders), before any work is started."""
    from .efml_format import is_efml_folder
    from .native_format import CONFIG_FILE
    from .published import PUBLISHED

    if options is None or str(source) in PUBLISHED:
        return
    path = resolve_model_path(source)
    if path.is_dir() and (is_efml_folder(path) or (path / CONFIG_FILE).is_file()):
        raise ModelFormatError(f"{path} holds its own architecture; options (--options) is only for original hdf5 weights")


def load_bilm(
    source: Optional[PathLike] = None,
    *,
    options: Optional[PathLike] = None,
    device: Union[str, torch.device] = "cpu",
    compute_dtype: str = "float32",
) -> BiLM:
    """Load a biLM, in eval mode.

    source (Optional[PathLike]): None for the default bundled model, a bundled or published
        model's name, a native model folder, an ELMoForManyLangs model folder, an original
        weights hdf5 (with `options`), a folder holding ``options.json`` and the weights
        (``model.hdf5`` or the only ``.hdf5``, the NLPL layout), or a ``.zip`` / ``.tar.*``
        archive of any of these folders (as the NLPL vector repository publishes them).
    options (Optional[PathLike]): the ``options.json`` of original weights.
    device (Union[str, torch.device]): where the model runs, e.g. "cpu" or "cuda:0".
    compute_dtype (str): "float32" (default), "bfloat16", or "int8" (CPU only: the products in
        int8 with weights quantized per output channel, the rest and the outputs float32).
    RETURNS (BiLM): the model.
    """
    from .archive import is_archive, unpack

    from .quantization import check_int8, to_compute_dtype

    target, number_type = torch_device(device), check_compute_dtype(compute_dtype)
    if number_type == "int8":
        check_int8(target)  # before reading the weights
    path = resolve_model_path(source)
    if path.is_dir():
        bilm = _load_folder(path, options)
    elif not _is_hdf5(path) and is_archive(path):
        with tempfile.TemporaryDirectory(prefix="spacy-elmo-") as folder:
            try:
                bilm = _load_folder(unpack(path, folder), options, shown=path)
            except ModelFormatError as err:
                raise ModelFormatError(f"{path}: in the archive: {err}") from None
    else:
        bilm = _load_weights_file(path, options)
    return to_compute_dtype(bilm, target, number_type)


def original_weights(folder: Path) -> Optional[Path]:
    """The weights of an original-format folder: ``model.hdf5`` (the NLPL name), else the only
    ``.hdf5`` / ``.h5`` file; None where there is none or several."""
    if (folder / "model.hdf5").is_file():
        return folder / "model.hdf5"
    weights = sorted(folder.glob("*.hdf5")) + sorted(folder.glob("*.h5"))
    return weights[0] if len(weights) == 1 else None


def _load_folder(path: Path, options: Optional[PathLike], shown: Optional[Path] = None) -> BiLM:
    """Load a model folder of any format; `shown` names it in errors (an archive it came from)."""
    from .efml_format import is_efml_folder, load_efml
    from .native_format import CONFIG_FILE, load_native
    from .original_format import load_original

    if options is not None and (is_efml_folder(path) or (path / CONFIG_FILE).is_file()):
        raise ModelFormatError(f"{shown or path} holds its own architecture; options (--options) is only for original hdf5 weights")
    if is_efml_folder(path):
        return load_efml(path)
    if (path / CONFIG_FILE).is_file():
        return load_native(path)
    weights = original_weights(path)
    if (path / "model" / CONFIG_FILE).is_file() and weights is None:
        raise ModelFormatError(
            f"{shown or path} is a pretraining run's output or checkpoint folder, not a model; its biLM is {path / 'model'}"
        )
    if not (path / "options.json").is_file() or weights is None:
        raise ModelFormatError(
            f"{shown or path}: not a model folder: neither native ({CONFIG_FILE}), nor ELMoForManyLangs "
            "(config.json, char.dic, token_embedder.pkl, encoder.pkl), nor original weights (options.json "
            "with model.hdf5 or exactly one .hdf5 file)"
        )
    return load_original(weights, options or path / "options.json")


def _is_hdf5(path: Path) -> bool:
    import h5py

    return path.is_file() and h5py.is_hdf5(path)


def _load_weights_file(path: Path, options: Optional[PathLike]) -> BiLM:
    from .original_format import load_original

    if not _is_hdf5(path):
        raise ModelFormatError(
            f"{path}: not an HDF5 file, so neither original ELMo weights (.hdf5), nor a model archive "
            "(.zip, .tar), nor a model folder"
        )
    if options is None:
        sibling = path.parent / "options.json"
        if not sibling.is_file():
            raise ModelFormatError(f"{path}: original weights need their options; pass options=PATH/TO/options.json")
        options = sibling
    return load_original(path, options)
