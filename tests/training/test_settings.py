"""Training settings: validation with messages naming the setting, and the dict round trip."""

import pytest

from spacy_elmo.training.errors import TrainingSetupError
from spacy_elmo.training.settings import TrainingSettings


def test_defaults_are_the_bilm_tf_recipe_and_tokens_per_step_counts_all_processes():
    settings = TrainingSettings()
    assert (settings.optimizer, settings.learning_rate, settings.initial_accumulator) == ("adagrad", 0.2, 1.0)
    assert (settings.batch_size, settings.unroll_steps, settings.clip_norm, settings.dropout) == (128, 20, 10.0, 0.1)
    assert TrainingSettings(batch_size=3, unroll_steps=5).tokens_per_step(world_size=4) == 60


@pytest.mark.parametrize(
    "settings,message",
    [
        ({"optimizer": "rmsprop"}, "unknown optimizer 'rmsprop'; choose one of adagrad, adam, sgd"),
        ({"batch_size": 0}, "batch_size must be at least 1, got 0"),
        ({"keep_checkpoints": 0}, "keep_checkpoints must be at least 1, got 0"),
        ({"dropout": 1.0}, r"dropout must be in \[0, 1\), got 1.0"),
        ({"clip_norm": 0}, "negatives, learning_rate and clip_norm must be positive"),
        ({"compute_dtype": "float8"}, "unknown compute dtype 'float8'"),
        ({"storage_dtype": "int3"}, "unknown storage dtype 'int3'"),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(settings, message):
    with pytest.raises(TrainingSetupError, match=message):
        TrainingSettings(**settings)


def test_dict_round_trip_and_removed_names_point_to_the_new_ones():
    settings = TrainingSettings(batch_size=4, epochs=None, max_steps=7)
    assert TrainingSettings.from_dict(settings.to_dict()) == settings
    with pytest.raises(TrainingSetupError, match=r"unknown training settings: max_tokens \(now token_budget\), nonsense"):
        TrainingSettings.from_dict({"nonsense": 1, "max_tokens": 5})
