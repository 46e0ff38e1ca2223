"""The sha256 of the biLM state a saved `elmo` component holds (`model`: torch weights or an ONNX
graph), written beside it as `checksums.json` and checked before the state is read, so a
corrupted or truncated file is refused in one line instead of running or failing deep inside."""
import json
from pathlib import Path
from typing import Dict

from ..errors import SpacyElmoError
from ..paths import sha256

CHECKSUMS = "checksums.json"
CHECKED = ("model",)
ADVICE = "copy, download or save the pipeline again"


def write_checksums(folder: Path) -> None:
    """Record the sha256 of each checked file of a saved component folder."""
    sums = {name: sha256(folder / name) for name in CHECKED if (folder / name).is_file()}
    (folder / CHECKSUMS).write_text(json.dumps(sums, indent=2, sort_keys=True) + "\n", encoding="utf8")


def verify_checksums(folder: Path) -> None:
    """Check a saved component folder's files against its `checksums.json`, if it has one
    (pipelines saved before spacy-elmo 0.4 have none)."""
    recorded = folder / CHECKSUMS
    if not recorded.is_file():
        return
    try:
        sums: Dict[str, str] = json.loads(recorded.read_text(encoding="utf8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise SpacyElmoError(f"{recorded}: not readable JSON ({err}); {ADVICE}") from None
    for name, expected in sums.items():
        path = folder / name
        if not path.is_file():
            raise SpacyElmoError(f"{path}: missing, though {recorded} lists it; {ADVICE}")
        if sha256(path) != expected:
            raise SpacyElmoError(f"{path}: its sha256 is not the one saved with it in {recorded} (corrupted or truncated); {ADVICE}")
