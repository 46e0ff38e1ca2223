"""`pretrain.json`: what a native model folder says about itself (language, training, licence)."""
import json
from pathlib import Path
from typing import Any, Dict, Optional, Union

from .loading import resolve_model_path

MODEL_INFO_FILE = "pretrain.json"


def read_model_info(source: Optional[Union[str, Path]]) -> Dict[str, Any]:
    """The info of a bundled model or native folder ({} where there is none, as for original
    weights): e.g. "name", "lang", "license", "steps", "tokens"."""
    try:
        path = resolve_model_path(source)
    except ValueError:
        return {}
    info_file = path / MODEL_INFO_FILE
    if not info_file.is_file():
        return {}
    info = json.loads(info_file.read_text(encoding="utf8"))
    return info if isinstance(info, dict) else {}
