"""`EmbedSettings`: the one place `embed` chooses its layer, checked when made."""
import pytest

from spacy_elmo.embed.settings import EmbedSettings
from spacy_elmo.errors import ConfigError


def test_the_layer_is_chosen_in_the_settings_with_the_components_vocabulary():
    assert EmbedSettings().layer == "all"
    assert EmbedSettings(layer="top").layer == "top" and EmbedSettings(layer=1).layer == 1
    with pytest.raises(ConfigError, match="unknown 'layer' 'middle'"):
        EmbedSettings(layer="middle")
    with pytest.raises(ConfigError, match="only used with layer = \"mix\""):
        EmbedSettings(layer="top", mix_weights=[0.0, 0.0, 1.0])


def test_the_removed_spelling_is_pythons_own_error():
    with pytest.raises(TypeError, match="layers"):
        EmbedSettings(layers="top")
