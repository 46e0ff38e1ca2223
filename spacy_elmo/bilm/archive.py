"""Model archives: the NLPL vector repository's zips and other .zip / .tar.* downloads.

An NLPL ELMo archive (the layout ltgoslo's simple_elmo reads) holds a weights ``.hdf5``
(``model.hdf5``, else the only one), ``options.json``, optionally ``vocab.txt`` or
``vocab.txt.gz`` and ``meta.json``; the NLPL copies of ELMoForManyLangs models hold that model's
folder instead. Only the files of the model's folder are unpacked, under their base names, so an
archive cannot write outside the target folder.
"""
import shutil
import tarfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Dict, Mapping

from ..paths import PathLike
from .errors import ModelFormatError

# A folder holding one of these is a model folder (bilm-tf / NLPL, ELMoForManyLangs, native).
MARKERS = ("options.json", "token_embedder.pkl", "model.safetensors")


def is_archive(path: Path) -> bool:
    """Whether `path` is a zip or tar file (or named as one)."""
    return path.is_file() and (_is_zip(path) or ".tar" in path.suffixes or tarfile.is_tarfile(path))


def _is_zip(path: Path) -> bool:
    return path.suffix.lower() == ".zip" or zipfile.is_zipfile(path)


def unpack(archive: PathLike, target: PathLike) -> Path:
    """Write the files of the model folder inside `archive` into `target`; returns `target`."""
    archive, target = Path(archive), Path(target)
    try:
        if _is_zip(archive):
            with zipfile.ZipFile(archive) as handle:
                members = {info.filename: info for info in handle.infolist() if not info.is_dir()}
                chosen = _model_files(members, archive)
                target.mkdir(parents=True, exist_ok=True)
                for name, base in chosen.items():
                    with handle.open(members[name]) as source, open(target / base, "wb") as out:
                        shutil.copyfileobj(source, out, 2**20)
        else:
            with tarfile.open(archive) as handle:
                entries = {info.name: info for info in handle.getmembers() if info.isfile()}
                chosen = _model_files(entries, archive)
                target.mkdir(parents=True, exist_ok=True)
                for name, base in chosen.items():
                    stream = handle.extractfile(entries[name])
                    if stream is None:  # not a regular file
                        continue
                    with stream, open(target / base, "wb") as out:
                        shutil.copyfileobj(stream, out, 2**20)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as err:
        reason = " ".join(str(err).split())
        raise ModelFormatError(f"{archive}: cannot unpack the archive, truncated or corrupted ({reason})") from None
    return target


def _model_files(names: Mapping[str, object], archive: Path) -> Dict[str, str]:
    """The archive members of the shallowest folder holding a model, to their base names."""
    folders = sorted(
        {str(PurePosixPath(name).parent) for name in names if PurePosixPath(name).name in MARKERS},
        key=lambda folder: (0 if folder == "." else folder.count("/") + 1, folder),
    )
    if not folders:
        raise ModelFormatError(
            f"{archive}: no model inside (no folder with {', '.join(MARKERS)}); expected an NLPL ELMo "
            "archive (model.hdf5 + options.json) or an ELMoForManyLangs model folder"
        )
    chosen = {}
    for name in names:
        path = PurePosixPath(name)
        if str(path.parent) == folders[0] and path.name not in ("", ".", ".."):
            chosen[name] = path.name
    return chosen
