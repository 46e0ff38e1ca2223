"""ELMoForManyLangs folders: exact against the original's outputs, safe and clear to load.

tests/fixtures/efml holds a tiny random model saved by the original code and the original's
`Embedder(folder).sents2elmo(SENTENCES, output_layer=-2)` (scripts/make_efml_fixture.py).
"""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from spacy_elmo.bilm import ModelFormatError, bilm_from_bytes, bilm_to_bytes, load_bilm, save_bilm
from spacy_elmo.bilm.efml_format import read_architecture

FIXTURE = Path(__file__).parents[1] / "fixtures" / "efml"
SENTENCES = json.loads((FIXTURE / "sentences.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURE / "reference.npz") as arrays:
        return [arrays[f"sentence_{i}"] for i in range(len(SENTENCES))]


@pytest.fixture
def folder(tmp_path):
    return Path(shutil.copytree(FIXTURE, tmp_path / "model"))


def assert_matches(outputs, reference):
    assert len(outputs) == len(reference)
    for output, expected in zip(outputs, reference):
        assert output.shape == expected.shape
        np.testing.assert_allclose(output, expected, atol=1e-5, rtol=0)


def test_layers_equal_the_original(reference):
    bilm = load_bilm(FIXTURE)
    assert bilm.n_layers == 3 and bilm.output_dim == 16
    assert_matches(bilm.embed_sentences(SENTENCES), reference)
    assert_matches([bilm.embed_sentences([s])[0] for s in SENTENCES], reference)  # stateless


def test_token_layer_is_repeated_for_both_directions():
    layers = load_bilm(FIXTURE).embed_sentences(SENTENCES[:1])[0]
    np.testing.assert_array_equal(layers[0, :, :8], layers[0, :, 8:])


def test_many_distinct_tokens_encode_as_one_by_one():
    bilm = load_bilm(FIXTURE)
    tokens = [f"{a}{b}{'天' * (i % 9)}" for i, (a, b) in enumerate(zip("abcdefghij" * 20, "tcamdogr" * 25))]
    with torch.no_grad():
        together = bilm.embed_tokens(tokens)
        alone = torch.cat([bilm.embed_tokens([t]) for t in tokens])
    torch.testing.assert_close(together, alone, atol=1e-5, rtol=0)


def test_lexicon_follows_the_original_conventions():
    lexicon = load_bilm(FIXTURE).characters
    chars, words = lexicon.characters, lexicon.words
    assert chars["\u3000"] == 29 and " " not in chars  # the line with only an id
    row = lexicon.encode(["supercalifragilistic"])[0]
    assert row[0] == chars["<eow>"] and row[9] == chars["<bow>"]  # the original's slots
    assert list(row[1:9]) == [chars.get(c, chars["<oov>"]) for c in "supercal"] and row[-1] == words["<oov>"]
    bos = lexicon.encode(["<S>"])[0]
    assert list(bos[:3]) == [chars["<eow>"], chars["<bos>"], chars["<bow>"]] and bos[-1] == words["<bos>"]


def test_native_folder_and_bytes_keep_the_outputs(tmp_path, reference):
    bilm = load_bilm(FIXTURE)
    assert_matches(load_bilm(save_bilm(bilm, tmp_path / "native")).embed_sentences(SENTENCES), reference)
    assert_matches(bilm_from_bytes(bilm_to_bytes(bilm)).embed_sentences(SENTENCES), reference)


def test_state_dicts_in_the_current_torch_format_load_too(folder, reference):
    for name in ("token_embedder.pkl", "encoder.pkl"):
        torch.save(torch.load(folder / name, weights_only=True), folder / name)
    assert_matches(load_bilm(folder).embed_sentences(SENTENCES), reference)


class Payload:
    def __reduce__(self):
        return (Path.touch, (Path(__file__).parent / "efml-payload-ran",))


def test_a_pickle_that_needs_more_than_tensors_is_refused(folder):
    state = torch.load(folder / "encoder.pkl", weights_only=True)
    state["extra"] = Payload()
    torch.save(state, folder / "encoder.pkl")
    with pytest.raises(ModelFormatError, match=r"encoder\.pkl: holds more than tensors"):
        load_bilm(folder)
    assert not (Path(__file__).parent / "efml-payload-ran").exists()


def test_a_truncated_state_dict_names_the_file(folder):
    data = (folder / "token_embedder.pkl").read_bytes()
    (folder / "token_embedder.pkl").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError, match=r"token_embedder\.pkl: not a readable torch state dict"):
        load_bilm(folder)


def test_a_missing_file_is_named(folder):
    (folder / "encoder.pkl").unlink()
    with pytest.raises(ModelFormatError, match=r"needs encoder\.pkl, which is missing"):
        load_bilm(folder)


def test_a_dic_id_beyond_the_embedding_names_the_file_and_line(folder):
    with open(folder / "word.dic", "a", encoding="utf-8") as out:
        out.write("zebra\t25\n")
    with pytest.raises(ModelFormatError, match=r"word\.dic, line 26: id 25 of 'zebra' is beyond the embedding matrix \(25 rows\)"):
        load_bilm(folder)


def test_a_malformed_dic_line_is_named(folder):
    with open(folder / "char.dic", "a", encoding="utf-8") as out:
        out.write("x\ty\tz\n")
    with pytest.raises(ModelFormatError, match=r"char\.dic, line 37: expected 'token<TAB>id'"):
        load_bilm(folder)


def edit_architecture(folder, section, key, value):
    path = folder / "tiny_cnn_5_6_8_16.json"
    architecture = json.loads(path.read_text())
    architecture[section][key] = value
    path.write_text(json.dumps(architecture))


def test_the_lstm_token_embedder_is_refused_by_name(folder):
    edit_architecture(folder, "token_embedder", "name", "lstm")
    with pytest.raises(ModelFormatError, match=r"tiny_cnn_5_6_8_16\.json: token_embedder\.name 'lstm' is not supported"):
        load_bilm(folder)


def test_sizes_that_do_not_match_the_tensors_name_file_and_key(folder):
    edit_architecture(folder, "encoder", "dim", 32)
    with pytest.raises(ModelFormatError, match=r"encoder\.pkl: tensor 'forward_layer_0\.input_linearity\.weight' has shape \(64, 8\), the architecture gives \(128, 8\)"):
        load_bilm(folder)


def test_a_missing_architecture_key_is_named(folder):
    path = folder / "tiny_cnn_5_6_8_16.json"
    architecture = json.loads(path.read_text())
    del architecture["token_embedder"]["filters"]
    path.write_text(json.dumps(architecture))
    with pytest.raises(ModelFormatError, match=r"missing key 'token_embedder\.filters'"):
        load_bilm(folder)


def test_the_published_config_path_falls_back_to_the_package_architecture(folder):
    arguments = {"config_path": "/users4/conll18st/elmo/configs/cnn_50_100_512_4096_sample.json"}
    (folder / "config.json").write_text(json.dumps(arguments))
    architecture, source = read_architecture(folder)
    assert source == "elmoformanylangs/configs/cnn_50_100_512_4096_sample.json"
    assert architecture["encoder"]["dim"] == 4096 and architecture["token_embedder"]["word_dim"] == 100
    arguments["config_path"] = "elsewhere/unknown.json"
    (folder / "config.json").write_text(json.dumps(arguments))
    with pytest.raises(ModelFormatError, match=r"config\.json: config_path 'elsewhere/unknown\.json' is neither"):
        read_architecture(folder)


def test_a_size_that_is_not_an_integer_is_named(folder):
    edit_architecture(folder, "token_embedder", "max_characters_per_token", "10")
    with pytest.raises(ModelFormatError, match=r"token_embedder\.max_characters_per_token must be a non-negative integer, got '10'"):
        load_bilm(folder)


def test_a_missing_special_entry_is_named(folder):
    lines = (folder / "char.dic").read_text(encoding="utf-8").splitlines()
    (folder / "char.dic").write_text("".join(f"{line}\n" for line in lines if not line.startswith("<bow>")), encoding="utf-8")
    with pytest.raises(ModelFormatError, match=r"the character \(char\.dic\) vocabulary lacks the special entries <bow>"):
        load_bilm(folder)


def test_the_bilm_tf_format_refuses_a_learned_vocabulary(tmp_path):
    from spacy_elmo.bilm import export_original

    with pytest.raises(ModelFormatError, match="bilm-tf's format cannot hold"):
        export_original(load_bilm(FIXTURE), tmp_path / "original")
    assert not (tmp_path / "original").exists()
