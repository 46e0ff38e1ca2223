"""biLMs of other languages in spaCy pipelines of those languages: pretraining on Chinese and
German text, ELMoForManyLangs models in `spacy.blank("zh")`, the language checks, init-config."""
import json
import random
import warnings
from pathlib import Path

import h5py
import pytest
import spacy
from spacy.tokens import Doc
from spacy.util import load_config, load_model_from_config
from typer.testing import CliRunner

from spacy_elmo.bilm import load_bilm
from spacy_elmo.bilm.model_info import read_model_info
from spacy_elmo.cli.app import app
from spacy_elmo.cli.main import main  # noqa: F401  (registers the commands)

EFML = Path(__file__).parents[1] / "fixtures" / "efml"
CHINESE_WORDS = "今天 天氣 真 好 潮水 退 了 就 知道 誰 沒 穿 褲子 我們 學生 老師 喜歡 讀書 城市 很 大 小 貓 狗 吃 飯".split()
GERMAN_WORDS = "der die das Hund Katze läuft schnell über Straße Brücke groß klein schön heute morgen Bäume wachsen".split()


def write_text(path, words, joiner, end, n_lines=300, seed=0):
    rng = random.Random(seed)
    lines = [joiner.join(rng.choice(words) for _ in range(rng.randint(4, 10))) + end for _ in range(n_lines)]
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def elmo_pipeline(lang, bilm):
    nlp = spacy.blank(lang)
    nlp.add_pipe("elmo", config={"model": {"bilm": str(bilm)}})
    return nlp


@pytest.mark.parametrize(
    "lang,words,joiner,end,sample,n_tokens",
    [("zh", CHINESE_WORDS, "", "。", "今天天氣真好", 6), ("de", GERMAN_WORDS, " ", ".", "Der Hund läuft über die Brücke.", 7)],
)
def test_pretrain_on_another_language_and_embed_in_its_pipeline(tmp_path, lang, words, joiner, end, sample, n_tokens):
    text = write_text(tmp_path / "text.txt", words, joiner, end)
    out = tmp_path / "run"
    settings = ["--preset", "tiny", "--batch-size", 4, "--unroll-steps", 6, "--max-steps", 4, "--quiet"]
    result = run("pretrain", out, text, "--lang", lang, *settings)
    assert result.exit_code == 0, result.output
    assert read_model_info(out / "model")["lang"] == lang
    vocab = set(load_bilm(out / "model").vocab) - {"<S>", "</S>", "<UNK>"}
    tokens = {t.text for t in spacy.blank(lang)(text.read_text(encoding="utf8").replace("\n", " "))} - {" "}
    assert vocab and vocab <= tokens  # the language's tokens (Chinese: single characters, not lines)
    nlp = elmo_pipeline(lang, out / "model")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nlp.initialize()
    doc = nlp(sample)
    assert len(doc) == n_tokens and doc._.elmo.shape == (3, n_tokens, 16)
    with pytest.warns(UserWarning, match=f"language is 'en'.*trained on '{lang}'"):
        elmo_pipeline("en", out / "model").initialize()


@pytest.fixture
def converted(tmp_path):
    """The ELMoForManyLangs fixture as a native folder with a model card."""
    result = run("convert", EFML, tmp_path / "efml-zh", "--lang", "zh")
    assert result.exit_code == 0, result.output
    info_file = tmp_path / "efml-zh" / "pretrain.json"
    card = {"name": "efml-tiny", "lang": "zh", "corpus": "a few Chinese lines", "license": "MIT"}
    info_file.write_text(json.dumps(card))
    return tmp_path / "efml-zh"


def test_an_efml_model_in_a_chinese_pipeline_carries_its_card_into_the_meta(converted, tmp_path):
    nlp = elmo_pipeline("zh", converted)
    nlp.initialize()
    doc = nlp("今天天氣真好")
    assert [t.text for t in doc] == list("今天天氣真好")  # spaCy's default segmenter: characters
    expected = load_bilm(EFML).embed_sentences([list("今天天氣真好")])[0]
    assert doc._.elmo.shape == (3, 6, 16) and abs(doc._.elmo - expected).max() < 1e-5
    nlp.to_disk(tmp_path / "pipeline")
    meta = json.loads((tmp_path / "pipeline" / "meta.json").read_text())
    source = {"name": "spacy-elmo biLM efml-tiny", "license": "MIT", "corpus": "a few Chinese lines"}
    assert source in meta["sources"]
    with pytest.warns(UserWarning, match="language is 'de'.*trained on 'zh'"):
        elmo_pipeline("de", converted).initialize()


def test_an_efml_folder_loads_in_a_pipeline_directly_and_takes_segmented_words():
    nlp = elmo_pipeline("zh", EFML)
    nlp.initialize()
    assert nlp("潮水退了")._.elmo.shape == (3, 4, 16)
    words = ["潮水", "退", "了"]  # as a word segmenter (jieba, pkuseg) gives them
    expected = load_bilm(EFML).embed_sentences([words])[0]
    assert abs(nlp(Doc(nlp.vocab, words=words))._.elmo - expected).max() < 1e-5


def test_init_config_writes_a_working_config_for_the_language(converted, tmp_path):
    result = run("init-config", tmp_path / "zh.cfg", "--lang", "zh", "--pipeline", "tagger", "--bilm", converted)
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    config = load_config(tmp_path / "zh.cfg")
    assert config["nlp"]["lang"] == "zh" and config["components"]["elmo"]["model"]["bilm"] == str(converted)
    nlp = load_model_from_config(config, auto_fill=True)
    assert nlp.lang == "zh" and nlp.pipe_names == ["elmo", "tagger"]
    result = run("init-config", tmp_path / "named.cfg", "--lang", "zh", "--bilm", "efml-zh-hant")
    assert result.exit_code == 0 and "warning" not in result.output, result.output
    assert load_config(tmp_path / "named.cfg")["components"]["elmo"]["model"]["bilm"] == "efml-zh-hant"


def test_embed_and_init_config_take_the_models_language_by_default(converted, tmp_path):
    text = tmp_path / "zh.txt"
    text.write_text("今天天氣真好\n", encoding="utf8")
    result = run("embed", text, "--output", tmp_path / "zh.hdf5", "--model", converted)
    assert result.exit_code == 0, result.output
    with h5py.File(tmp_path / "zh.hdf5", "r") as embeddings:
        assert embeddings["0"].shape == (3, 6, 16)  # the Chinese tokenizer's 6 characters, not 1 English token
    result = run("init-config", tmp_path / "zh.cfg", "--bilm", converted)
    assert result.exit_code == 0 and "warning" not in result.output, result.output
    assert load_config(tmp_path / "zh.cfg")["nlp"]["lang"] == "zh"


def test_init_config_warns_when_the_languages_differ_without_downloading(converted, tmp_path, monkeypatch):
    monkeypatch.setenv("SPACY_ELMO_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("SPACY_ELMO_OFFLINE", "1")
    for bilm in (converted, "efml-zh"):
        result = run("init-config", tmp_path / "de.cfg", "--lang", "de", "--bilm", bilm, "--force")
        assert result.exit_code == 0, result.output
        assert "pipeline's language is 'de', but the biLM was trained on 'zh' text" in result.output
    assert not (tmp_path / "empty-cache").exists()


def test_docs_languages_names_every_published_model():
    from spacy_elmo.bilm.published import PUBLISHED

    text = (Path(__file__).parents[2] / "docs" / "languages.md").read_text(encoding="utf8")
    assert [name for name in PUBLISHED if f"`{name}`" not in text] == []
    nlpl_ids = {name: model.files[0][3:-4] for name, model in PUBLISHED.items() if model.files[0].startswith("11/")}
    assert len(nlpl_ids) == 44 and [name for name, i in nlpl_ids.items() if f"`{name}` | {i} |" not in text] == []


def test_pretrain_fine_tunes_an_efml_model_on_chinese_text(tmp_path):
    text = write_text(tmp_path / "text.txt", CHINESE_WORDS, "", "。")
    settings = ["--batch-size", 4, "--unroll-steps", 6, "--max-steps", 2, "--quiet"]
    result = run("pretrain", tmp_path / "run", text, "--init", EFML, "--lang", "zh", *settings)
    assert result.exit_code == 0, result.output
    tuned, original = load_bilm(tmp_path / "run" / "model"), load_bilm(EFML)
    assert tuned.characters == original.characters and tuned.vocab  # the same lexicon, a new softmax
    changed = [n for n, p in tuned.state_dict().items() if n in original.state_dict() and not (p == original.state_dict()[n]).all()]
    assert "token_encoder.word_embedding.weight" in changed


def test_exporting_an_efml_model_to_bilm_tf_is_refused_before_training(tmp_path):
    text = write_text(tmp_path / "text.txt", CHINESE_WORDS, "", "。")
    settings = ["--batch-size", 4, "--unroll-steps", 6, "--max-steps", 2, "--quiet", "--export-original"]
    result = run("pretrain", tmp_path / "run", text, "--init", EFML, "--lang", "zh", *settings)
    assert result.exit_code == 1 and "bilm-tf's format cannot hold" in result.output, result.output
    assert "steps" not in result.output and not (tmp_path / "run" / "checkpoints").exists()
