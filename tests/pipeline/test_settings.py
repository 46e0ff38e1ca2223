"""`ElmoSettings`, the `elmo` component's settings: checked when made, each error naming its
setting; layer indices written as text or whole floats."""
import pytest

from spacy_elmo.errors import ConfigError
from spacy_elmo.pipeline.settings import ElmoSettings


@pytest.mark.parametrize("written,index", [(" 2 ", 2), ("0", 0), (2.0, 2), (1, 1), ("top", "top")])
def test_a_layer_index_is_read_from_text_or_a_whole_float(written, index):
    assert ElmoSettings(layer=written).layer == index
    assert type(ElmoSettings(layer=written).layer) is type(index)


@pytest.mark.parametrize(
    "settings,message",
    [
        ({"feature_cache_mb": -1}, "^elmo: 'feature_cache_mb' must be a whole number, 0 or more, got -1$"),
        ({"feature_cache_mb": True}, "'feature_cache_mb' must be a whole number, 0 or more, got True"),
        ({"feature_cache_mb": 1.5}, "'feature_cache_mb' must be a whole number, 0 or more, got 1.5"),
        ({"store": "some"}, r"^elmo: unknown 'store' 'some'; use one of \('all', 'selected'\)$"),
        ({"layer": "bottom"}, "^elmo: .*'layer'"),
        ({"layer": 1, "mix_weights": [1.0, 2.0]}, "^elmo: .*only used with"),
    ],
)
def test_bad_settings_are_one_config_error_naming_the_setting(settings, message):
    with pytest.raises(ConfigError, match=message):
        ElmoSettings(**settings)


def test_a_cache_of_zero_disables_it_and_is_allowed():
    assert ElmoSettings(feature_cache_mb=0).feature_cache_mb == 0

