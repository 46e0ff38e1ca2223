"""The JSON files of the model formats (config.json, options.json, ELMoForManyLangs' configs)."""
import json
from pathlib import Path
from typing import Any

from .errors import ModelFormatError


def read_json_file(path: Path) -> Any:
    """The parsed content of `path`, or a ModelFormatError naming the file and the problem."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ModelFormatError(f"{path}: not valid JSON ({err})") from None
