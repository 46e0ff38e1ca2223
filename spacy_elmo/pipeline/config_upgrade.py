"""The rewrite of older spacy-elmo configs for this version (`python -m spacy_elmo
upgrade-config`, and `set-runtime` on v1 pipelines).

- spacy-elmo 0.1: the weights (`model`, `options`) and the segmentation settings were keys of
  the `elmo` component; they now belong to its model block (`model` is called `bilm` there).
- spacy-elmo 0.2: the model block `spacy-elmo.ElmoModel.v1` (wherever it is, also inside an
  `ElmoEmbed.v1` block) becomes `spacy-elmo.ElmoModel.v2`, whose `dtype` is called
  `compute_dtype` and which adds `runtime` (by default "torch", as v1 runs).

Every other line of the config is kept. v1 blocks keep working as they are; the rewrite is for
configs that are to use the new settings.
"""
from typing import Any, Dict, List

from ..errors import SpacyElmoError
from ..registry_names import ELMO_FACTORY, ELMO_MODEL, ELMO_MODEL_V1

MOVED = ("options", "context", "window", "stride", "batch_size", "max_tokens", "device", "dtype")
RENAMED_IN_V2 = {"dtype": "compute_dtype"}


def upgrade_config(text: str) -> "tuple[str, List[str]]":
    """The config text with each 0.1 `elmo` component and each v1 model block upgraded, and
    what changed."""
    from thinc.api import Config

    try:
        config = Config().from_str(text, interpolate=False)
    except Exception as err:  # confection raises several types for unreadable text
        raise SpacyElmoError(f"cannot read the config: {err}") from None
    changed: List[str] = []
    for name, component in config.get("components", {}).items():
        if component.get("factory") != ELMO_FACTORY or isinstance(component.get("model"), dict):
            continue
        block: Dict[str, Any] = {"@architectures": ELMO_MODEL_V1, "bilm": component.pop("model", None)}
        changed.append(f"{name}.model -> {name}.model.bilm")
        for key in MOVED:
            if key in component:
                block[key] = component.pop(key)
                changed.append(f"{name}.{key}")
        component["model"] = block
    _upgrade_v1_blocks(config, [], changed)
    return config.to_str(interpolate=False), changed


def _upgrade_v1_blocks(section: Dict[str, Any], path: List[str], changed: List[str]) -> None:
    """Make each `ElmoModel.v1` block under `section` a v2 block, in place and in order."""
    if section.get("@architectures") == ELMO_MODEL_V1:
        items = [(RENAMED_IN_V2.get(key, key), value) for key, value in section.items()]
        section.clear()
        section.update(items)
        section["@architectures"] = ELMO_MODEL
        changed.append(f"{'.'.join(path)} -> {ELMO_MODEL}")
    for key, value in section.items():
        if isinstance(value, dict):
            _upgrade_v1_blocks(value, [*path, key], changed)
