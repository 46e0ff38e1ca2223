"""The native format's header and checks that tests/bilm/test_formats.py leaves out: the files
written, the format name and version, storage dtypes, and the vocabulary beside the softmax."""
import json

import pytest
import torch
from safetensors.torch import load as load_bytes
from safetensors.torch import load_file, save

from spacy_elmo.bilm import ModelFormatError, bilm_from_bytes, bilm_to_bytes, save_bilm
from spacy_elmo.bilm.native_format import load_native

from ..conftest import random_bilm

VOCAB = ["<S>", "</S>", "<UNK>", "the", "cat"]


def with_softmax(seed=0):
    bilm = random_bilm(seed=seed)
    bilm.set_softmax(VOCAB)
    return bilm


def test_the_folder_holds_the_header_weights_and_vocabulary(tmp_path):
    bilm = with_softmax()
    assert save_bilm(bilm, tmp_path / "m", storage_dtype="bfloat16") == tmp_path / "m"
    header = json.loads((tmp_path / "m" / "config.json").read_text())
    assert header == {"format": "spacy-elmo", "format_version": 1, "storage_dtype": "bfloat16", "options": bilm.config.to_options_json()}
    assert (tmp_path / "m" / "vocab.txt").read_text(encoding="utf8") == "".join(t + "\n" for t in VOCAB)
    tensors = load_file(str(tmp_path / "m" / "model.safetensors"))
    assert set(tensors) == set(bilm.state_dict()) and {t.dtype for t in tensors.values()} == {torch.bfloat16}
    loaded = load_native(tmp_path / "m")
    assert loaded.vocab == VOCAB and not loaded.training
    for name, tensor in loaded.state_dict().items():
        assert tensor.dtype == torch.float32
        assert torch.equal(tensor, bilm.state_dict()[name].to(torch.bfloat16).float()), name


def test_an_unknown_storage_dtype_is_refused_before_writing(tmp_path):
    with pytest.raises(ModelFormatError) as err:
        save_bilm(random_bilm(), tmp_path / "m", storage_dtype="int8")
    assert str(err.value) == "unknown storage dtype 'int8'; expected one of float32, float16, bfloat16, float16-softmax"
    assert not (tmp_path / "m" / "model.safetensors").exists()
    with pytest.raises(ModelFormatError, match="unknown storage dtype 'float64'"):
        bilm_to_bytes(random_bilm(), storage_dtype="float64")


@pytest.mark.parametrize(
    "change, described",
    [
        ({"format": "allennlp"}, "format 'allennlp' version 1"),
        ({"format_version": 2}, "format 'spacy-elmo' version 2"),
        ({"format": None}, "format None version 1"),
    ],
)
def test_another_format_or_version_is_named(tmp_path, change, described):
    save_bilm(random_bilm(), tmp_path / "m")
    config = tmp_path / "m" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), **change}))
    with pytest.raises(ModelFormatError) as err:
        load_native(tmp_path / "m")
    assert str(err.value) == f"{config}: {described} is not 'spacy-elmo' version 1"


def test_a_vocabulary_of_another_size_than_the_softmax_is_named(tmp_path):
    save_bilm(with_softmax(), tmp_path / "m")
    (tmp_path / "m" / "vocab.txt").write_text("<S>\n</S>\n<UNK>\n", encoding="utf8")
    with pytest.raises(ModelFormatError) as err:
        load_native(tmp_path / "m")
    assert str(err.value) == f"{tmp_path / 'm' / 'config.json'}: vocab.txt has 3 words for a softmax of 5"


def test_missing_files_are_named(tmp_path):
    with pytest.raises(ModelFormatError) as err:
        load_native(tmp_path)
    assert str(err.value) == f"{tmp_path}: not a spacy-elmo model folder (config.json not found)"
    save_bilm(random_bilm(), tmp_path / "m")
    (tmp_path / "m" / "model.safetensors").unlink()
    with pytest.raises(ModelFormatError) as err:
        load_native(tmp_path / "m")
    assert str(err.value) == f"{tmp_path / 'm'}: weights file model.safetensors not found"


def test_bytes_without_a_softmax_keep_none_and_a_stray_tensor_is_named():
    bilm = random_bilm()
    loaded = bilm_from_bytes(bilm_to_bytes(bilm, storage_dtype="float16"))
    assert loaded.vocab is None and loaded.softmax is None
    assert all(torch.equal(t, bilm.state_dict()[n].half().float()) for n, t in loaded.state_dict().items())
    data = bilm_to_bytes(bilm)
    tensors = {**load_bytes(data), "extra.weight": torch.zeros(2)}
    header_size = int.from_bytes(data[:8], "little")
    metadata = json.loads(data[8 : 8 + header_size])["__metadata__"]
    with pytest.raises(ModelFormatError, match=r"^serialized biLM: weights do not match the config: missing \[\], unexpected \['extra.weight'\]$"):
        bilm_from_bytes(save(tensors, metadata=metadata))

