"""The `elmo` component: outputs, layer selection, context, edge cases, configuration errors."""
import subprocess
import sys

import numpy as np
import pytest
import spacy

from .helpers import elmo_config, elmo_nlp, model_config

TEXT = "The cat sat on the mat. It was happy there!"


@pytest.fixture(scope="module")
def nlp(model_files):
    return elmo_nlp(model_files)


def direct(nlp, sentences):
    """What the biLM gives for these token lists, called directly."""
    return nlp.get_pipe("elmo").bilm.embed_sentences(sentences)


def test_factory_needs_no_config():
    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo")
    assert elmo.model.attrs["settings"].bilm is None and elmo.settings.layer == "average"
    doc = nlp("The bundled model loads when first needed.")
    assert doc._.elmo.shape == (3, len(doc), 256)


def test_doc_token_span_vectors(nlp):
    doc = nlp(TEXT)
    layers = doc._.elmo
    assert layers.dtype == np.float32 and layers.shape == (3, len(doc), 32)
    sents = [[t.text for t in s] for s in doc.sents]
    expected = np.concatenate(direct(nlp, sents), axis=1)
    np.testing.assert_allclose(layers, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(doc[2]._.elmo, layers[:, 2].mean(axis=0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(doc[1:4]._.elmo, layers[:, 1:4].mean(axis=(0, 1)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "config,coefficients",
    [
        ({"layer": 0}, [1, 0, 0]),
        ({"layer": 2}, [0, 0, 1]),
        ({"layer": "top"}, [0, 0, 1]),
        ({"layer": "average"}, [1 / 3, 1 / 3, 1 / 3]),
        ({"layer": "mix", "mix_weights": [0.0, 1.0, 2.0], "mix_gamma": 0.5}, 0.5 * np.exp([0, 1, 2]) / np.exp([0, 1, 2]).sum()),
    ],
)
@pytest.mark.parametrize("store", ["all", "selected"])
def test_layer_selection(model_files, config, coefficients, store):
    nlp = elmo_nlp(model_files, config={**config, "store": store})
    doc = nlp(TEXT)
    all_layers = np.concatenate(direct(nlp, [[t.text for t in s] for s in doc.sents]), axis=1)
    expected = np.tensordot(np.asarray(coefficients, dtype=np.float32), all_layers, axes=1)
    assert doc._.elmo.shape == ((3, len(doc), 32) if store == "all" else (len(doc), 32))
    for token in doc:
        np.testing.assert_allclose(token._.elmo, expected[token.i], rtol=1e-5, atol=1e-6)


def test_sentences_are_read_separately_and_whitespace_is_skipped(nlp):
    doc = nlp("Hello  world. Bye now.")
    assert doc[1].is_space
    np.testing.assert_array_equal(doc._.elmo[:, 1], 0.0)
    hello, bye = direct(nlp, [["Hello", "world", "."], ["Bye", "now", "."]])
    np.testing.assert_allclose(doc._.elmo[:, [0, 2, 3]], hello, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(doc._.elmo[:, 4:], bye, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(doc[0:3]._.elmo, doc._.elmo[:, [0, 2]].mean(axis=(0, 1)), rtol=1e-5, atol=1e-6)


def test_whole_doc_context_without_sentence_boundaries(model_files):
    nlp = elmo_nlp(model_files, sentencizer=False)
    doc = nlp(TEXT)
    (expected,) = direct(nlp, [[t.text for t in doc]])
    np.testing.assert_allclose(doc._.elmo, expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="no sentence boundaries"):
        elmo_nlp(model_files, sentencizer=False, config={"context": "sentences"})(TEXT)


def test_doc_context_reads_the_whole_doc_even_with_sentence_boundaries(model_files):
    nlp = elmo_nlp(model_files, sentencizer=True, config={"context": "doc"})
    doc = nlp(TEXT)
    assert len(list(doc.sents)) == 2
    (whole,) = direct(nlp, [[t.text for t in doc]])
    np.testing.assert_allclose(doc._.elmo, whole, rtol=1e-6, atol=1e-6)
    first, _ = direct(nlp, [[t.text for t in sent] for sent in doc.sents])
    n_first = len(next(iter(doc.sents)))
    assert not np.allclose(doc._.elmo[1:, :n_first], first[1:])  # the LSTM layers saw the other sentence


def test_feature_cache_keys_on_sentence_starts(model_files):
    """Frozen training reads cached layers: the same tokens split into other sentences are
    another entry, with the layers of that split."""
    from spacy.tokens import Doc

    nlp = elmo_nlp(model_files, sentencizer=False)
    elmo = nlp.get_pipe("elmo")
    words = ["Cats", "sleep", "Dogs", "bark", "loudly"]
    one_split = Doc(nlp.vocab, words=words, sent_starts=[True, False, True, False, False])
    other_split = Doc(nlp.vocab, words=words, sent_starts=[True, False, False, True, False])
    first = elmo._cached_layers([one_split])[0]
    second = elmo._cached_layers([other_split])[0]
    assert len(elmo.feature_cache) == 2
    assert not np.allclose(first, second)
    for doc, cached in ((one_split, first), (other_split, second)):
        sentences = [[t.text for t in sent] for sent in doc.sents]
        np.testing.assert_allclose(cached, np.concatenate(direct(nlp, sentences), axis=1), rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(elmo._cached_layers([doc])[0], cached)  # served from the cache
    assert elmo.feature_cache.hits == 2


def test_long_doc_runs_in_bounded_windows(model_files, monkeypatch):
    nlp = elmo_nlp(model_files, sentencizer=False, config={"window": 64, "stride": 48, "max_tokens": 1024})
    elmo = nlp.get_pipe("elmo")
    longest = []
    run = elmo.bilm.layer_tensors
    monkeypatch.setattr(elmo.bilm, "layer_tensors", lambda s, **kw: longest.append(max(map(len, s))) or run(s, **kw))
    words = [f"w{i % 97}" for i in range(20_000)]
    doc = nlp(spacy.tokens.Doc(nlp.vocab, words=words))
    assert doc._.elmo.shape == (3, 20_000, 32) and np.isfinite(doc._.elmo).all()
    assert max(longest) == 64 and np.abs(doc._.elmo).max(axis=(0, 2)).min() > 0
    # Windows start at 0, 48, 96, ...; tokens 56..103 come from the window 48..111.
    (window,) = direct(nlp, [words[48:112]])
    np.testing.assert_allclose(doc._.elmo[:, 56:104], window[:, 8:56], rtol=1e-6, atol=1e-6)


HOSTILE = [
    "",
    " ",
    "   \n\t  ",
    "word",
    "x" * 300,
    "Ünïcödé " + "é" * 60 + " done",
    "Emoji 😀🎉👍🏽 and flags 🇫🇷.",
    "中文句子。日本語の文です。한국어 문장.",
    "ctrl \x00 nul \x01\x02\x1b[31m red \x7f end",
    "tabs\tand\nnewlines\r\nmixed",
]


def test_hostile_input_in_one_batch_gives_finite_right_shapes(nlp):
    docs = list(nlp.pipe(HOSTILE, batch_size=4))
    for text, doc in zip(HOSTILE, docs):
        assert doc._.elmo.shape == (3, len(doc), 32), text
        assert np.isfinite(doc._.elmo).all(), text
        for token in doc:
            assert token._.elmo.shape == (32,)
            assert bool(np.any(token._.elmo)) != token.is_space, (text, token.text)
        assert doc[:]._.elmo.shape == (32,)
    assert docs[0]._.elmo.shape == (3, 0, 32)
    single = [nlp(text) for text in HOSTILE]
    for a, b in zip(docs, single):
        np.testing.assert_allclose(a._.elmo, b._.elmo, rtol=1e-5, atol=1e-6)


def test_one_token_doc_equals_biLM_on_that_token(nlp):
    doc = nlp("word")
    (expected,) = direct(nlp, [["word"]])
    np.testing.assert_allclose(doc._.elmo, expected, rtol=1e-6, atol=1e-6)


def test_vector_hooks_opt_in(model_files):
    plain = elmo_nlp(model_files)("A cat sat.")
    assert not plain.user_token_hooks and plain.tensor.size == 0
    nlp = elmo_nlp(model_files, config={"set_vectors": True, "layer": "top"})
    doc, other = nlp("A cat sat."), nlp("A dog ran.")
    assert doc.tensor.shape == (len(doc), 32)
    np.testing.assert_array_equal(doc[1].vector, doc._.elmo[2, 1])
    np.testing.assert_allclose(doc[0:2].vector, doc._.elmo[2, 0:2].mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(doc.vector, doc._.elmo[2].mean(axis=0), rtol=1e-6)
    assert doc[1].similarity(doc[1]) == pytest.approx(1.0, abs=1e-5)
    assert -1.0 <= doc.similarity(other) < 1.0
    a, b = doc.vector, other.vector
    assert doc.similarity(other) == pytest.approx(float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)), rel=1e-5)


@pytest.mark.parametrize(
    "config,message",
    [
        ({"compute_dtype": "float64"}, "unknown 'compute_dtype'"),
        ({"runtime": "tensorrt"}, "unknown 'runtime'"),
        ({"layer": "bottom"}, "unknown 'layer'"),
        ({"layer": -1}, "0 or more"),
        ({"layer": 1, "mix_weights": [1, 2, 3]}, "only used with"),
        ({"context": "paragraphs"}, "unknown 'context'"),
        ({"window": 8, "stride": 9}, "'stride'"),
        ({"store": "some"}, "unknown 'store'"),
        ({"device": "tpu"}, "unknown 'device'"),
        ({"batch_size": 0}, "'batch_size'"),
    ],
)
def test_invalid_config_fails_at_construction(config, message):
    with pytest.raises(ValueError, match=message):
        spacy.blank("en").add_pipe("elmo", config=elmo_config(config=config))


@pytest.mark.parametrize(
    "config,message",
    [
        ({"layer": 3}, "'layer' 3 is out of range"),
        ({"layer": "mix", "mix_weights": [1.0, 2.0]}, "2 values but this biLM has 3 layers"),
    ],
)
def test_config_not_matching_the_weights_fails_at_load(model_files, config, message):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config(model_files, config))
    with pytest.raises(ValueError, match=message):
        nlp.initialize()


def test_wrong_weights_fail_at_load_naming_the_file(model_files, tmp_path):
    weights, options = model_files
    truncated = tmp_path / "truncated.hdf5"
    truncated.write_bytes(weights.read_bytes()[:5000])
    bad_options = tmp_path / "options.json"
    text = options.read_text().replace('"projection_dim": 16', '"projection_dim": 12')
    assert text != options.read_text()
    bad_options.write_text(text)
    cases = [
        (tmp_path / "missing.hdf5", options, "missing.hdf5"),
        (truncated, options, "truncated.hdf5"),
        (weights, bad_options, "lm_weights.hdf5|options.json"),
    ]
    for w, o, name in cases:
        nlp = spacy.blank("en")
        nlp.add_pipe("elmo", config=model_config((w, o)))
        with pytest.raises(ValueError, match=name):
            nlp.initialize()


def test_bfloat16_weights_give_float32_outputs_close_to_float32(model_files, nlp):
    doc = elmo_nlp(model_files, config={"compute_dtype": "bfloat16"})(TEXT)
    reference = nlp(TEXT)._.elmo
    assert doc._.elmo.dtype == np.float32 and doc._.elmo.shape == reference.shape
    assert np.abs(doc._.elmo - reference).max() < 0.1 * np.abs(reference).max()
    assert not np.array_equal(doc._.elmo, reference)


def test_spacy_blank_does_not_import_the_biLM():
    code = "import sys, spacy; spacy.blank('en'); print('spacy_elmo.bilm' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_usage_docs_settings_tables_give_the_defaults_of_the_settings_classes():
    import dataclasses
    import json
    import re
    from pathlib import Path

    from spacy_elmo.layers.elmo_model import ElmoModelSettings
    from spacy_elmo.pipeline.settings import ElmoSettings

    usage = (Path(__file__).resolve().parents[2] / "docs" / "usage.md").read_text(encoding="utf8")
    documented = {}
    for keys, defaults in re.findall(r"^\| (`[a-z_]+`(?:, `[a-z_]+`)*) \| (`[^|]+`) \|", usage, re.M):
        names = re.findall(r"`([a-z_]+)`", keys)
        values = [json.loads(v) for v in re.findall(r"`([^`]+)`", defaults)]
        documented.update(zip(names, values))
    for cls in (ElmoSettings, ElmoModelSettings):
        for field in dataclasses.fields(cls):
            assert documented.get(field.name, "missing") == field.default, field.name


def test_a_layer_index_written_as_text_or_a_whole_float_is_that_index():
    for written in ("1", 1.0):
        assert spacy.blank("en").add_pipe("elmo", config={"layer": written}).settings.layer == 1
    with pytest.raises(ValueError, match="'layer' must be an index or one of .* got 1.5"):
        spacy.blank("en").add_pipe("elmo", config={"layer": 1.5})


def test_replace_listeners_config_swaps_every_listener_block_for_an_embed_block():
    from spacy_elmo.pipeline.component import _replace_listener_cfg

    model_block = {"@architectures": "spacy-elmo.ElmoModel.v1", "bilm": "en_small", "context": "auto"}
    static = {"@architectures": "spacy.MultiHashEmbed.v2", "width": 8}
    tok2vec = {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {"@architectures": "spacy-elmo.ElmoListener.v1", "width": 8, "upstream": "elmo", "static_embed": static},
        "encode": {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": 8},
    }
    rewritten = _replace_listener_cfg(model_block, tok2vec, frozen=False)
    assert rewritten["encode"] == tok2vec["encode"] and rewritten["@architectures"] == "spacy.Tok2Vec.v2"
    assert rewritten["embed"] == {
        "@architectures": "spacy-elmo.ElmoEmbed.v1",
        "width": 8,
        "static_embed": static,
        "frozen_elmo": False,
        "elmo": model_block,
    }
    assert tok2vec["embed"]["@architectures"] == "spacy-elmo.ElmoListener.v1"  # the input is left alone
