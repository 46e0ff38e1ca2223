"""Errors of the `elmo` component name it and keep their class, whatever raised them."""
import json

import pytest
import spacy

from spacy_elmo.bilm import ModelFormatError, save_bilm
from spacy_elmo.errors import SpacyElmoError

from ..conftest import random_bilm


def _pipeline(tmp_path):
    save_bilm(random_bilm(), tmp_path / "bilm")
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"@architectures": "spacy-elmo.ElmoModel.v1", "bilm": str(tmp_path / "bilm")}})
    return nlp


def test_initialize_names_the_component_and_keeps_a_package_error_class(tmp_path):
    nlp = _pipeline(tmp_path)
    (tmp_path / "bilm" / "config.json").write_text("{not json")
    with pytest.raises(ModelFormatError, match=r"^elmo component 'elmo': .*config\.json"):
        nlp.initialize()


def test_initialize_wraps_other_value_errors_without_calling_their_constructor(tmp_path):
    nlp = _pipeline(tmp_path)
    elmo = nlp.get_pipe("elmo")

    def broken_init(model, X=None, Y=None):
        raise json.JSONDecodeError("Expecting value", "doc", 0)  # its constructor takes 3 arguments

    elmo.model.init = broken_init
    with pytest.raises(SpacyElmoError, match=r"^elmo component 'elmo': Expecting value") as raised:
        nlp.initialize()
    assert isinstance(raised.value.__cause__, json.JSONDecodeError)


def test_a_0_1_model_setting_points_to_upgrade_config():
    nlp = spacy.blank("en")
    with pytest.raises(SpacyElmoError, match=r"model = 'en_base' is a spacy-elmo 0\.1 setting.*upgrade-config"):
        nlp.add_pipe("elmo", config={"model": "en_base"})
