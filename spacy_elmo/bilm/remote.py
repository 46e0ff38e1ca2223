"""The published English ELMo weights by name, fetched once into a cache folder.

`elmo-small`, `elmo-medium`, `elmo-original` and `elmo-original-5.5b` are AllenNLP's
options.json + weights.hdf5 at their published location (or a mirror keeping the same relative
paths). Files are downloaded with pooch: into a temporary file beside the target, moved into place
only when complete, so an interrupted download leaves nothing that could be mistaken for the
file, and concurrent downloads of the same file each finish with a whole file.

- `$SPACY_ELMO_CACHE`: the cache folder (default: the platform's user cache dir).
- `$SPACY_ELMO_MIRROR`: replaces the base URL.
- `$SPACY_ELMO_OFFLINE=1`: never download; a missing file is an error that says what to do.
"""
import os
from pathlib import Path
from typing import Dict, NamedTuple

from .errors import ModelFormatError

DEFAULT_BASE_URL = "https://s3-us-west-2.amazonaws.com/allennlp/models/elmo/"
FILES = ("options.json", "weights.hdf5")


class Published(NamedTuple):
    """A published model: its folder under the base URL and its number of parameters."""

    stem: str
    parameters: int


PUBLISHED: Dict[str, Published] = {
    "elmo-small": Published("2x1024_128_2048cnn_1xhighway", 13_600_000),
    "elmo-medium": Published("2x2048_256_2048cnn_1xhighway", 28_000_000),
    "elmo-original": Published("2x4096_512_2048cnn_2xhighway", 93_600_000),
    "elmo-original-5.5b": Published("2x4096_512_2048cnn_2xhighway_5.5B", 93_600_000),
}


def cache_dir() -> Path:
    """Where published weights are kept: `$SPACY_ELMO_CACHE`, else the user cache dir."""
    if os.environ.get("SPACY_ELMO_CACHE"):
        return Path(os.environ["SPACY_ELMO_CACHE"])
    import platformdirs

    return Path(platformdirs.user_cache_dir("spacy-elmo"))


def base_url() -> str:
    """`$SPACY_ELMO_MIRROR`, else the published location; always ending in "/"."""
    url = os.environ.get("SPACY_ELMO_MIRROR") or DEFAULT_BASE_URL
    return url if url.endswith("/") else url + "/"


def file_url(name: str, kind: str) -> str:
    """The URL of a published model's options.json or weights.hdf5."""
    stem = PUBLISHED[name].stem
    return f"{base_url()}{stem}/elmo_{stem}_{kind}"


def model_folder(name: str) -> Path:
    """The cache folder of a published model (its options.json and weights.hdf5)."""
    return cache_dir() / name


def is_cached(name: str) -> bool:
    return all((model_folder(name) / kind).is_file() for kind in FILES)


def fetch(name: str, progress: bool = True) -> Path:
    """The cache folder of the published model `name`, downloading what is missing."""
    if name not in PUBLISHED:
        raise ModelFormatError(f"no published model named {name!r}; the names are {', '.join(PUBLISHED)}")
    folder = model_folder(name)
    for kind in FILES:
        target = folder / kind
        if not target.is_file():
            _download(file_url(name, kind), target, progress)
    return folder


def _download(url: str, target: Path, progress: bool) -> None:
    by_hand = (
        f"place the file there by hand (download {url}), point $SPACY_ELMO_MIRROR at a mirror, "
        "or pass the path of a local weights .hdf5 and its options.json instead of the name"
    )
    if os.environ.get("SPACY_ELMO_OFFLINE", "") not in ("", "0"):
        raise ModelFormatError(f"{target} is not cached and $SPACY_ELMO_OFFLINE is set; {by_hand}")
    import pooch
    import requests

    pooch.get_logger().setLevel("WARNING")  # not its advice to pin a hash after each download
    try:
        pooch.retrieve(url, known_hash=None, fname=target.name, path=target.parent, progressbar=progress)
    except (requests.RequestException, OSError) as err:
        raise ModelFormatError(f"cannot download {url} into {target} ({err}); {by_hand}") from None
