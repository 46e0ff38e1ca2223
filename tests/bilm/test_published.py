"""The table of published models: names, where their files are, their cards, and that each
architecture given has the parameter count the table states."""
import pytest
import torch

from spacy_elmo.bilm import BiLM, BiLMArchitecture
from spacy_elmo.bilm.published import ALLENNLP_URL, ARCHITECTURES, NLPL_URL, PUBLISHED

ALLENNLP = ["elmo-small", "elmo-medium", "elmo-original", "elmo-original-5.5b"]


def test_names_are_the_table_keys_and_families_are_where_they_are_published():
    assert all(name == model.name for name, model in PUBLISHED.items())
    assert [name for name in PUBLISHED if name.startswith("elmo-")] == ALLENNLP
    assert all(PUBLISHED[name].base_url == ALLENNLP_URL and not PUBLISHED[name].is_archive for name in ALLENNLP)
    nlpl = [model for name, model in PUBLISHED.items() if name.startswith("nlpl-")]
    assert nlpl and all(m.base_url == NLPL_URL and m.files == (f"20/{m.name[5:]}.zip",) for m in nlpl)
    efml = [model for name, model in PUBLISHED.items() if name.startswith("efml-")]
    assert len(efml) == 45 and all(m.is_archive for m in efml)


def test_an_allennlp_model_is_an_options_file_and_a_weights_file():
    small = PUBLISHED["elmo-small"]
    assert small.files == (
        "2x1024_128_2048cnn_1xhighway/elmo_2x1024_128_2048cnn_1xhighway_options.json",
        "2x1024_128_2048cnn_1xhighway/elmo_2x1024_128_2048cnn_1xhighway_weights.hdf5",
    )


def test_cards_name_the_weights_url_and_the_licence_only_where_stated():
    assert PUBLISHED["elmo-small"].info() == {
        "name": "elmo-small",
        "lang": "en",
        "corpus": "1 Billion Word Benchmark (~800M tokens of news)",
        "url": ALLENNLP_URL + PUBLISHED["elmo-small"].files[1],
        "license": "Apache-2.0 (the bilm-tf and AllenNLP repositories' licence)",
    }
    assert PUBLISHED["efml-zh-hant"].info()["lang"] == "zh"  # the spaCy language of the variant
    assert PUBLISHED["efml-zh-hant"].info()["url"] == NLPL_URL + "11/179.zip"
    assert "license" not in PUBLISHED["nlpl-210"].info()


@pytest.mark.parametrize("name", [name for name, model in PUBLISHED.items() if model.options])
def test_the_stated_parameters_are_those_of_the_architecture(name):
    model = PUBLISHED[name]
    with torch.device("meta"):  # the sizes, without allocating the weights
        bilm = BiLM(BiLMArchitecture.from_options_json(model.options))
    # The char table has an all-zero row (id 0) that the weight files do not store.
    stored = sum(p.numel() for p in bilm.parameters()) - bilm.config.char_embedding_dim
    assert round(stored / 1e5) == model.parameters / 1e5  # the table states them to 0.1 M


def test_training_presets_are_the_allennlp_architectures():
    assert ARCHITECTURES == {size: PUBLISHED[f"elmo-{size}"].options for size in ("small", "medium", "original")}
    assert PUBLISHED["elmo-original-5.5b"].options == ARCHITECTURES["original"]
    assert [ARCHITECTURES[s]["lstm"]["dim"] for s in ("small", "medium", "original")] == [1024, 2048, 4096]
    assert [ARCHITECTURES[s]["char_cnn"]["n_highway"] for s in ("small", "medium", "original")] == [1, 1, 2]
