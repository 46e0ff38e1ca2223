"""`upgrade_config`: the rewrite of spacy-elmo 0.1 elmo components and v1 model blocks."""
import pytest
from thinc.api import Config

from spacy_elmo.pipeline.config_upgrade import upgrade_config


OLD_CONFIG = """
[paths]
elmo_model = null
elmo_options = null

[nlp]
lang = "en"
pipeline = ["elmo"]

[components]

[components.elmo]
factory = "elmo"
model = ${paths.elmo_model}
options = ${paths.elmo_options}
layer = "top"
context = "sentences"
window = 200
frozen = true
"""


def test_upgrade_config_moves_the_keys_of_a_0_1_config_into_the_model_block(tmp_path):
    from spacy.util import load_config_from_str, load_model_from_config

    with pytest.raises(Exception, match="context"):
        load_model_from_config(load_config_from_str(OLD_CONFIG), auto_fill=True)
    text, moved = upgrade_config(OLD_CONFIG)
    assert moved == [
        "elmo.model -> elmo.model.bilm",
        "elmo.options",
        "elmo.context",
        "elmo.window",
        "components.elmo.model -> spacy-elmo.ElmoModel.v2",
    ]
    nlp = load_model_from_config(load_config_from_str(text), auto_fill=True)
    elmo = nlp.get_pipe("elmo")
    settings = elmo.model.attrs["settings"]
    assert (settings.bilm, settings.context, settings.window, elmo.settings.layer) == (None, "sentences", 200, "top")
    assert upgrade_config(text)[1] == []  # an upgraded config is left as it is


V1_CONFIG = """
[components]

[components.elmo]
factory = "elmo"

[components.elmo.model]
@architectures = "spacy-elmo.ElmoModel.v1"
bilm = "en_base"
dtype = "int8"
keep_softmax = false

[components.ner]
factory = "ner"

[components.ner.model]
@architectures = "spacy.TransitionBasedParser.v2"

[components.ner.model.tok2vec]
@architectures = "spacy.Tok2Vec.v2"

[components.ner.model.tok2vec.embed]
@architectures = "spacy-elmo.ElmoEmbed.v1"
width = 96

[components.ner.model.tok2vec.embed.elmo]
@architectures = "spacy-elmo.ElmoModel.v1"
bilm = null
"""


def test_upgrade_config_makes_every_v1_model_block_v2():
    text, changed = upgrade_config(V1_CONFIG)
    assert changed == [
        "components.elmo.model -> spacy-elmo.ElmoModel.v2",
        "components.ner.model.tok2vec.embed.elmo -> spacy-elmo.ElmoModel.v2",
    ]
    config = Config().from_str(text, interpolate=False)
    block = config["components"]["elmo"]["model"]
    assert list(block.items()) == [
        ("@architectures", "spacy-elmo.ElmoModel.v2"), ("bilm", "en_base"), ("compute_dtype", "int8"), ("keep_softmax", False)
    ]
    assert config["components"]["ner"]["model"]["tok2vec"]["embed"]["elmo"]["@architectures"] == "spacy-elmo.ElmoModel.v2"
    assert upgrade_config(text)[1] == []


def test_other_components_and_v2_blocks_are_left_as_they_are():
    text = """
[components]

[components.tagger]
factory = "tagger"

[components.elmo]
factory = "elmo"
layer = "top"

[components.elmo.model]
@architectures = "spacy-elmo.ElmoModel.v2"
bilm = "en_base"
compute_dtype = "int8"
"""
    upgraded, changed = upgrade_config(text)
    assert changed == []
    assert Config().from_str(upgraded, interpolate=False) == Config().from_str(text, interpolate=False)


def test_a_0_1_component_without_weights_gets_a_model_block_with_bilm_none():
    text = '[components]\n\n[components.elmo]\nfactory = "elmo"\ndtype = "bfloat16"\n'
    upgraded, changed = upgrade_config(text)
    assert changed == ["elmo.model -> elmo.model.bilm", "elmo.dtype", "components.elmo.model -> spacy-elmo.ElmoModel.v2"]
    block = Config().from_str(upgraded, interpolate=False)["components"]["elmo"]["model"]
    assert dict(block) == {"@architectures": "spacy-elmo.ElmoModel.v2", "bilm": None, "compute_dtype": "bfloat16"}


def test_unreadable_text_is_one_error():
    with pytest.raises(ValueError, match="cannot read the config: "):
        upgrade_config("[components\nfactory = ")
