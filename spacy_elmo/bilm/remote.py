"""Published models by name (the table in published.py), fetched once into a cache folder.

Files are downloaded with pooch: into a temporary file beside the target, moved into place only
when complete, so an interrupted download leaves nothing that could be mistaken for the file,
and concurrent downloads of the same file each finish with a whole file. An archive is unpacked
into the model's ``model`` folder (through a temporary folder renamed when complete) and then
deleted.

- `$SPACY_ELMO_CACHE`: the cache folder (default: the platform's user cache dir).
- `$SPACY_ELMO_MIRROR`: replaces every model's base URL (a mirror keeps the relative paths).
- `$SPACY_ELMO_OFFLINE=1`: never download; a missing model is an error naming every file to place.
"""
import os
import shutil
import tempfile
from pathlib import Path
from typing import List, Tuple

from .archive import unpack
from .errors import ModelDownloadError, ModelFormatError
from .published import PUBLISHED, PublishedModel

ORIGINAL_FILES = ("options.json", "weights.hdf5")
UNPACKED = "model"


def cache_dir() -> Path:
    """Where published weights are kept: `$SPACY_ELMO_CACHE`, else the user cache dir."""
    if os.environ.get("SPACY_ELMO_CACHE"):
        return Path(os.environ["SPACY_ELMO_CACHE"])
    import platformdirs

    return Path(platformdirs.user_cache_dir("spacy-elmo"))


def base_url(model: PublishedModel) -> str:
    """`$SPACY_ELMO_MIRROR`, else the model's published location; always ending in "/"."""
    url = os.environ.get("SPACY_ELMO_MIRROR") or model.base_url
    return url if url.endswith("/") else url + "/"


def model_folder(name: str) -> Path:
    """The cache folder of a published model."""
    return cache_dir() / name


def downloads(name: str) -> List[Tuple[str, Path]]:
    """(URL, cache path) of each file of a published model."""
    model = _model(name)
    folder = model_folder(name)
    targets = [folder / Path(model.files[0]).name] if model.is_archive else [folder / kind for kind in ORIGINAL_FILES]
    return [(base_url(model) + relative, target) for relative, target in zip(model.files, targets)]


def loadable_path(name: str) -> Path:
    """The folder that `load_bilm` reads once the model is fetched."""
    return model_folder(name) / UNPACKED if _model(name).is_archive else model_folder(name)


def is_cached(name: str) -> bool:
    if _model(name).is_archive:
        return loadable_path(name).is_dir()
    return all(target.is_file() for _, target in downloads(name))


def fetch(name: str, progress: bool = True) -> Path:
    """The loadable cache folder of the published model `name`, downloading what is missing."""
    if is_cached(name):
        return loadable_path(name)
    missing = [(url, target) for url, target in downloads(name) if not target.is_file()]
    if missing and os.environ.get("SPACY_ELMO_OFFLINE", "") not in ("", "0"):
        raise ModelDownloadError(f"{name} is not cached and $SPACY_ELMO_OFFLINE is set; {_by_hand(name, missing)}")
    folder = model_folder(name)
    new_folder = not folder.exists()
    try:
        for url, target in missing:
            _download(url, target, progress, _by_hand(name, missing))
    except ModelDownloadError:
        if new_folder and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()  # nothing came: leave the cache as it was
        raise
    if _model(name).is_archive:
        _unpack_once(downloads(name)[0][1], loadable_path(name))
    return loadable_path(name)


def _model(name: str) -> PublishedModel:
    if name not in PUBLISHED:
        raise ModelFormatError(f"no published model named {name!r}; `python -m spacy_elmo models` lists the names")
    return PUBLISHED[name]


def _by_hand(name: str, missing: List[Tuple[str, Path]]) -> str:
    files = "; ".join(f"download {url} to {target}" for url, target in missing)
    return (
        f"place the files by hand ({files}), point $SPACY_ELMO_MIRROR at a mirror, or pass the path of "
        f"a local copy of the model instead of the name {name!r}"
    )


def _download(url: str, target: Path, progress: bool, by_hand: str) -> None:
    import pooch
    import requests

    pooch.get_logger().setLevel("WARNING")  # not its advice to pin a hash after each download
    try:
        pooch.retrieve(url, known_hash=None, fname=target.name, path=target.parent, progressbar=progress)
    except (requests.RequestException, OSError) as err:
        raise ModelDownloadError(f"cannot download {url} into {target} ({err}); {by_hand}") from None


def _unpack_once(archive: Path, folder: Path) -> None:
    """Unpack `archive` into `folder` through a temporary folder, then delete the archive."""
    partial = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=folder.parent))
    try:
        try:
            unpack(archive, partial)
        except ModelFormatError as err:
            raise ModelFormatError(f"{err}; delete {archive} to download it again") from None
        try:
            partial.rename(folder)
        except OSError:
            if not folder.is_dir():  # not a concurrent fetch that finished first
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    archive.unlink(missing_ok=True)
