"""The published ELMo models: one table of where each is, what it is, and its architecture.

- AllenNLP's English models (Peters et al., 2018), options.json + weights.hdf5 each.
- ELMoForManyLangs (Che et al., 2018): 44 languages trained on 20M words of the CoNLL 2018
  shared task's raw text each, published in the NLPL vector repository (URLs of the
  HIT-SCIR/ELMoForManyLangs README), and a simplified-Chinese model trained on Chinese Gigaword.
- NLPL vector repository ELMo models in bilm-tf format (the archives ltgoslo's simple_elmo reads).
"""
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

ALLENNLP_URL = "https://s3-us-west-2.amazonaws.com/allennlp/models/elmo/"
NLPL_URL = "http://vectors.nlpl.eu/repository/"
EFML_ZHS_URL = "http://39.96.43.154/"
FILTERS_2048 = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]
# The 4096/512 architecture of every ELMoForManyLangs model, without its word and character
# embeddings, whose sizes depend on the language's vocabularies.
EFML_PARAMETERS = 94_066_752
EFML_CORPUS = "CoNLL 2018 shared task raw text (Wikipedia and Common Crawl), 20M-word sample"
EFML_LICENSE = "MIT (the ELMoForManyLangs repository's licence)"


@dataclass(frozen=True)
class PublishedModel:
    """A published biLM.

    name (str): its name here, e.g. "elmo-small", "efml-de", "nlpl-210".
    base_url (str): where it is published; `$SPACY_ELMO_MIRROR` replaces it.
    files (Tuple[str, ...]): paths under the base URL (a mirror keeps them): an options.json and a
        weights hdf5, or one archive (.zip, .tar.bz2) of a model folder.
    lang (str): the language code of its training text (spaCy's codes).
    corpus (str): what it was trained on.
    license (str): the licence its publisher states, where the models come from ("" where none).
    parameters (Optional[int]): number of parameters, where known.
    options (Optional[Dict[str, Any]]): its architecture (options.json schema), where known.
    """

    name: str
    base_url: str
    files: Tuple[str, ...]
    lang: str
    corpus: str
    license: str = ""
    parameters: Optional[int] = None
    options: Optional[Dict[str, Any]] = None

    @property
    def is_archive(self) -> bool:
        """Whether it is published as one archive of a model folder."""
        return len(self.files) == 1

    def info(self) -> Dict[str, str]:
        """The model card fields: name, lang, corpus, license, url."""
        card = {"name": self.name, "lang": self.lang, "corpus": self.corpus, "url": self.base_url + self.files[-1]}
        return {**card, "license": self.license} if self.license else card


def _options(lstm_dim: int, projection_dim: int, n_highway: int) -> Dict[str, Any]:
    """Options of a published English ELMo of the given sizes (2 layers, 2048 CNN filters)."""
    return {
        "lstm": {
            "dim": lstm_dim,
            "projection_dim": projection_dim,
            "n_layers": 2,
            "cell_clip": 3.0,
            "proj_clip": 3.0,
            "use_skip_connections": True,
        },
        "char_cnn": {
            "activation": "relu",
            "embedding": {"dim": 16},
            "filters": FILTERS_2048,
            "n_highway": n_highway,
            "n_characters": 262,
            "max_characters_per_token": 50,
        },
    }


def _allennlp(name: str, stem: str, parameters: int, options: Dict[str, Any], corpus: str) -> PublishedModel:
    files = (f"{stem}/elmo_{stem}_options.json", f"{stem}/elmo_{stem}_weights.hdf5")
    return PublishedModel(name, ALLENNLP_URL, files, "en", corpus, "Apache-2.0 (the bilm-tf and AllenNLP repositories' licence)", parameters, options)


ONE_BILLION = "1 Billion Word Benchmark (~800M tokens of news)"
ORIGINAL = _options(lstm_dim=4096, projection_dim=512, n_highway=2)
# ELMoForManyLangs in the NLPL repository, version 1.1: (language code, repository id).
EFML_IDS = (
    ("ar", 136), ("bg", 137), ("ca", 138), ("cs", 139), ("cu", 140), ("da", 141), ("de", 142), ("el", 143),
    ("en", 144), ("es", 145), ("et", 146), ("eu", 147), ("fa", 148), ("fi", 149), ("fr", 150), ("ga", 151),
    ("gl", 152), ("grc", 153), ("he", 154), ("hi", 155), ("hr", 156), ("hu", 157), ("id", 158), ("it", 159),
    ("ja", 160), ("ko", 161), ("la", 162), ("lv", 163), ("nl", 164), ("nb", 165), ("nn", 166), ("pl", 167),
    ("pt", 168), ("ro", 169), ("ru", 170), ("sk", 171), ("sl", 172), ("sv", 173), ("tr", 174), ("ug", 175),
    ("uk", 176), ("ur", 177), ("vi", 178), ("zh-hant", 179),
)
# NLPL ELMo models in bilm-tf format: (id, language, corpus).
NLPL_ELMO = (
    (210, "nb", "Norwegian Wikipedia (September 2020), lemmatized, ~160M words"),
    (211, "nb", "Norwegian Wikipedia (September 2020), tokenized, ~160M words"),
    (212, "ru", "Araneum Russicum, lemmatized (araneum_lemmas_elmo_2048_2020)"),
    (217, "nb", "NorBERT corpus (Wikipedia and Norsk Aviskorpus), NorELMo30: 30k-word LM vocabulary"),
    (218, "nb", "NorBERT corpus (Wikipedia and Norsk Aviskorpus), NorELMo100: 100k-word LM vocabulary"),
)

MODELS: List[PublishedModel] = [
    _allennlp("elmo-small", "2x1024_128_2048cnn_1xhighway", 13_600_000, _options(1024, 128, 1), ONE_BILLION),
    _allennlp("elmo-medium", "2x2048_256_2048cnn_1xhighway", 28_000_000, _options(2048, 256, 1), ONE_BILLION),
    _allennlp("elmo-original", "2x4096_512_2048cnn_2xhighway", 93_600_000, ORIGINAL, ONE_BILLION),
    _allennlp(
        "elmo-original-5.5b",
        "2x4096_512_2048cnn_2xhighway_5.5B",
        93_600_000,
        ORIGINAL,
        "Wikipedia (1.9B tokens) and WMT 2008-2012 news crawl (3.6B tokens)",
    ),
    *(
        PublishedModel(
            f"efml-{code}", NLPL_URL, (f"11/{nlpl_id}.zip",), code.split("-")[0], EFML_CORPUS, EFML_LICENSE, EFML_PARAMETERS
        )
        for code, nlpl_id in EFML_IDS
    ),
    PublishedModel(
        "efml-zh",
        EFML_ZHS_URL,
        ("zhs.model.tar.bz2",),
        "zh",
        "Chinese Gigaword v5, Xinhua portion (simplified Chinese)",
        EFML_LICENSE,
        EFML_PARAMETERS,
    ),
    *(PublishedModel(f"nlpl-{nlpl_id}", NLPL_URL, (f"20/{nlpl_id}.zip",), lang, corpus) for nlpl_id, lang, corpus in NLPL_ELMO),
]
PUBLISHED: Dict[str, PublishedModel] = {model.name: model for model in MODELS}
# The architectures of AllenNLP's models by size: presets for training.
ARCHITECTURES: Dict[str, Dict[str, Any]] = {
    size: PUBLISHED[f"elmo-{size}"].options for size in ("small", "medium", "original")  # type: ignore[misc]
}
