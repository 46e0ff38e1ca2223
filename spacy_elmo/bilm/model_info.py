"""What a model says about itself (language, training text, licence): the model card fields.

- a native folder: ``pretrain.json`` (written by `write_model_info`, for `pretrain` and `convert`);
- an NLPL folder or archive: ``meta.json`` (the NLPL vector repository's catalogue entry);
- a published model's name: its entry in the table of published.py, completed by its files.
"""
import json
import tarfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any, Dict, Optional, Union

from .archive import is_archive
from .loading import resolve_model_path
from .published import PUBLISHED

MODEL_INFO_FILE = "pretrain.json"
NLPL_META_FILE = "meta.json"
DEFAULT_LANG = "en"  # the language of a model whose card does not say
# ISO 639-3 codes of the NLPL catalogue to the language codes of spaCy.
ISO_639_3 = {
    "ara": "ar", "bul": "bg", "cat": "ca", "ces": "cs", "chu": "cu", "dan": "da", "deu": "de", "ell": "el",
    "eng": "en", "spa": "es", "est": "et", "eus": "eu", "fas": "fa", "fin": "fi", "fra": "fr", "gle": "ga",
    "glg": "gl", "heb": "he", "hin": "hi", "hrv": "hr", "hun": "hu", "ind": "id", "ita": "it", "jpn": "ja",
    "kor": "ko", "lat": "la", "lav": "lv", "nld": "nl", "nob": "nb", "nor": "nb", "nno": "nn", "pol": "pl",
    "por": "pt", "ron": "ro", "rus": "ru", "slk": "sk", "slv": "sl", "swe": "sv", "tur": "tr", "uig": "ug",
    "ukr": "uk", "urd": "ur", "vie": "vi", "zho": "zh",
}


def read_model_info(source: Optional[Union[str, Path]]) -> Dict[str, Any]:
    """The model card fields of a model ({} where nothing is known, as for a bare hdf5): e.g.
    "name", "lang", "corpus", "license", "url", and for models trained here "steps", "tokens"."""
    name = str(source) if source is not None else None
    table: Dict[str, Any] = PUBLISHED[name].info() if name in PUBLISHED else {}
    if table and not _fetched(name):
        return table  # never a download for the card alone
    try:
        path = resolve_model_path(source)
    except ValueError:
        return table
    return {**_from_files(path), **table}


def write_model_info(folder: Union[str, Path], info: Dict[str, Any]) -> Path:
    """Write the model card fields `info` into the native model folder `folder`, where
    `read_model_info` finds them; returns the file written."""
    path = Path(folder) / MODEL_INFO_FILE
    path.write_text(json.dumps(info, indent=2), encoding="utf8")
    return path


def model_language(info: Dict[str, Any], lang: Optional[str] = None) -> str:
    """`lang` when given, else the language of the model card `info` (from `read_model_info`),
    else "en": the spaCy language whose tokenizer feeds the model."""
    return lang or info.get("lang") or DEFAULT_LANG


def nlpl_info(meta: Any) -> Dict[str, Any]:
    """The model card fields of an NLPL ``meta.json``: language, corpus, name and URL."""
    if not isinstance(meta, dict):
        return {}
    corpora = meta.get("corpus")
    corpora = [c for c in (corpora if isinstance(corpora, list) else [corpora]) if isinstance(c, dict)]
    info: Dict[str, Any] = {}
    lang = next((c["language"] for c in corpora if c.get("language")), meta.get("language"))
    if isinstance(lang, str):
        info["lang"] = ISO_639_3.get(lang.lower(), lang.lower())
    descriptions = [str(c["description"]) for c in corpora if c.get("description")]
    if descriptions:
        info["corpus"] = "; ".join(descriptions)
    if meta.get("id") is not None:
        info["name"] = f"nlpl-{meta['id']}"
    if isinstance(meta.get("handle"), str):
        info["url"] = meta["handle"]
    return info


def _fetched(name: Optional[str]) -> bool:
    from .remote import is_cached

    return name is not None and is_cached(name)


def _from_files(path: Path) -> Dict[str, Any]:
    if path.is_dir():
        if (path / MODEL_INFO_FILE).is_file():
            return _dict(_read_json(path / MODEL_INFO_FILE))
        if (path / NLPL_META_FILE).is_file():
            return nlpl_info(_read_json(path / NLPL_META_FILE))
    elif is_archive(path):
        return nlpl_info(_archive_meta(path))
    return {}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def _dict(value: Any) -> Dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _archive_meta(path: Path) -> Any:
    """The shallowest ``meta.json`` inside a zip or tar archive, parsed (None where there is none)."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as handle:
                names = [n for n in handle.namelist() if PurePosixPath(n).name == NLPL_META_FILE]
                data = handle.read(min(names, key=lambda n: n.count("/"))) if names else None
        else:
            with tarfile.open(path) as handle:
                members = [m for m in handle.getmembers() if m.isfile() and PurePosixPath(m.name).name == NLPL_META_FILE]
                member = min(members, key=lambda m: m.name.count("/")) if members else None
                stream = handle.extractfile(member) if member is not None else None
                data = stream.read() if stream is not None else None
        return json.loads(data.decode("utf8")) if data else None
    except (zipfile.BadZipFile, tarfile.TarError, OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
