"""Preset architectures and the `--set KEY=VALUE` overrides."""

import pytest

from spacy_elmo.training.errors import TrainingSetupError
from spacy_elmo.training.presets import PRESETS, apply_overrides, parse_overrides, preset_architecture


def test_a_preset_is_a_copy_and_an_unknown_name_lists_the_choices():
    tiny = preset_architecture("tiny")
    tiny["lstm"]["dim"] = 999
    assert PRESETS["tiny"]["lstm"]["dim"] == 16
    with pytest.raises(TrainingSetupError, match="unknown preset 'huge'; choose one of tiny, "):
        preset_architecture("huge")


def test_overrides_parse_json_values_and_expand_short_names():
    assert parse_overrides(["lstm_dim=32", "lstm.cell_clip=2.5", "activation=relu", "filters=[[1, 4]]"]) == {
        "lstm.dim": 32,
        "lstm.cell_clip": 2.5,
        "char_cnn.activation": "relu",
        "char_cnn.filters": [[1, 4]],
    }
    with pytest.raises(TrainingSetupError, match="cannot read override 'lstm.dim'; expected KEY=VALUE"):
        parse_overrides(["lstm.dim"])


def test_apply_overrides_sets_existing_keys_only_and_leaves_the_input_alone():
    tiny = preset_architecture("tiny")
    changed = apply_overrides(tiny, {"lstm.dim": 32, "char_cnn.embedding.dim": 8})
    assert changed["lstm"]["dim"] == 32 and changed["char_cnn"]["embedding"]["dim"] == 8
    assert tiny["lstm"]["dim"] == 16
    with pytest.raises(TrainingSetupError, match=r"unknown architecture setting 'lstm.width' \(short names: "):
        apply_overrides(tiny, {"lstm.width": 3})
    with pytest.raises(TrainingSetupError, match="unknown architecture setting 'nope.dim'"):
        apply_overrides(tiny, {"nope.dim": 3})
