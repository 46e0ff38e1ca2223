"""Named biLM architectures (original ``options.json`` schema) and dotted-key overrides."""

import copy
import json
from typing import Any, Dict, Iterable, List

from ..bilm.published import ARCHITECTURES
from .errors import TrainingSetupError

# The architecture of `pretrain` when neither a preset nor a model to fine-tune is named.
DEFAULT_PRESET = "small"
PRESETS: Dict[str, Dict[str, Any]] = {
    # The bilm-tf training-test model, with M = 50 so spaCy tokens are not cut short.
    "tiny": {
        "lstm": {
            "dim": 16,
            "projection_dim": 8,
            "n_layers": 2,
            "cell_clip": 3.0,
            "proj_clip": 3.0,
            "use_skip_connections": True,
        },
        "char_cnn": {
            "activation": "tanh",
            "embedding": {"dim": 4},
            "filters": [[1, 8], [2, 8], [3, 16], [4, 32], [5, 64]],
            "n_highway": 1,
            "n_characters": 262,
            "max_characters_per_token": 50,
        },
    },
    # The published English models (small, medium, original).
    **ARCHITECTURES,
}

# Short names accepted by `--set`, for the sizes people change most.
ALIASES = {
    "lstm_dim": "lstm.dim",
    "projection_dim": "lstm.projection_dim",
    "n_layers": "lstm.n_layers",
    "cell_clip": "lstm.cell_clip",
    "proj_clip": "lstm.proj_clip",
    "use_skip_connections": "lstm.use_skip_connections",
    "char_dim": "char_cnn.embedding.dim",
    "filters": "char_cnn.filters",
    "n_highway": "char_cnn.n_highway",
    "max_characters_per_token": "char_cnn.max_characters_per_token",
    "activation": "char_cnn.activation",
}


def preset_architecture(name: str) -> Dict[str, Any]:
    """A copy of the architecture (options.json schema) of the preset `name`."""
    if name not in PRESETS:
        raise TrainingSetupError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    return copy.deepcopy(PRESETS[name])


def parse_overrides(assignments: Iterable[str]) -> Dict[str, Any]:
    """Parse "key=value" strings; values are JSON when they parse as JSON, else strings.

    Keys are dotted paths into the options ("lstm.dim") or one of the short ALIASES ("lstm_dim").
    """
    overrides: Dict[str, Any] = {}
    for assignment in assignments:
        key, sep, raw = assignment.partition("=")
        if not sep or not key.strip():
            raise TrainingSetupError(f"cannot read override {assignment!r}; expected KEY=VALUE, e.g. lstm.dim=512")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        overrides[ALIASES.get(key.strip(), key.strip())] = value
    return overrides


def apply_overrides(architecture: Dict[str, Any], overrides: Dict[str, Any]) -> Dict[str, Any]:
    """Return a copy of `architecture` with each dotted key of `overrides` set; keys must exist."""
    result = copy.deepcopy(architecture)
    for dotted, value in overrides.items():
        path: List[str] = dotted.split(".")
        section = result
        for part in path[:-1]:
            if not isinstance(section.get(part), dict):
                raise TrainingSetupError(f"unknown architecture setting {dotted!r}")
            section = section[part]
        if path[-1] not in section:
            known = ", ".join(sorted(ALIASES))
            raise TrainingSetupError(f"unknown architecture setting {dotted!r} (short names: {known})")
        section[path[-1]] = value
    return result
