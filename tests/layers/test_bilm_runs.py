"""What the model block does on either runtime (`bilm_runs.py`): read the configured biLM (its
softmax dropped unless kept, its card in `bilm_info`, errors prefixed), load it once on first
use, and run the segments of a batch of docs in bounded, length-sorted batches."""
from pathlib import Path

import pytest
from spacy.tokens import Doc
from spacy.vocab import Vocab
from thinc.api import Model

from spacy_elmo.bilm import save_bilm
from spacy_elmo.bilm.errors import ModelFormatError
from spacy_elmo.bilm.model_info import write_model_info
from spacy_elmo.errors import SpacyElmoError
from spacy_elmo.layers.bilm_runs import ensure_loaded, get_bilm, read_bilm, run_segments, set_sizes
from spacy_elmo.layers.model_settings import ElmoModelSettings
from spacy_elmo.layers.torch_runtime import build_torch_model

from ..conftest import TINY_CONFIG, random_bilm


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The tiny biLM (3 layers of 16) with a softmax, and a model card."""
    bilm = random_bilm()
    bilm.set_softmax(["<S>", "</S>", "<UNK>", "cat"])
    path = save_bilm(bilm, tmp_path_factory.mktemp("bilm") / "tiny")
    write_model_info(path, {"name": "tiny", "lang": "de", "license": "MIT", "steps": 5})
    return path


def settings_model(**settings) -> Model:
    return Model("settings_only", lambda model, X, is_train: (X, None), attrs={"settings": ElmoModelSettings(**settings)})


def test_read_bilm_drops_the_softmax_and_records_the_card(folder):
    model = settings_model(bilm=str(folder))
    bilm = read_bilm(model)
    assert bilm.softmax is None and next(bilm.parameters()).device.type == "cpu"
    assert model.attrs["bilm_info"] == {"name": "tiny", "lang": "de", "license": "MIT"}  # not the training fields
    kept = read_bilm(settings_model(bilm=str(folder), keep_softmax=True))
    assert kept.softmax is not None and kept.vocab == ["<S>", "</S>", "<UNK>", "cat"]


def test_set_sizes_are_the_biLMs_width_and_layers(folder):
    model = Model("sized", lambda model, X, is_train: (X, None), dims={"nO": None, "n_layers": None})
    set_sizes(model, read_bilm(settings_model(bilm=str(folder))))
    assert (model.get_dim("nO"), model.get_dim("n_layers")) == (2 * TINY_CONFIG.projection_dim, TINY_CONFIG.n_layers + 1)


def test_read_bilm_errors_say_elmo_model_and_keep_their_class(monkeypatch):
    def unreadable(*args, **kwargs):
        raise OSError("disk gone")

    monkeypatch.setattr("spacy_elmo.bilm.load_bilm", unreadable)
    with pytest.raises(SpacyElmoError, match=r"^elmo model: cannot read the biLM at '/models/x': disk gone$"):
        read_bilm(settings_model(bilm="/models/x"))

    def malformed(*args, **kwargs):
        raise ModelFormatError("/models/x: not a spacy-elmo model folder")

    monkeypatch.setattr("spacy_elmo.bilm.load_bilm", malformed)
    with pytest.raises(ModelFormatError, match=r"^elmo model: /models/x: not a spacy-elmo model folder$"):
        read_bilm(settings_model(bilm="/models/x"))


def test_ensure_loaded_initializes_only_a_model_without_weights(folder):
    model = build_torch_model(ElmoModelSettings(bilm=str(folder), device="cpu"))
    assert get_bilm(model) is None
    loads = []
    original = model.init
    model.init = lambda m, X=None, Y=None: loads.append(1) or original(m, X, Y)
    bilm = ensure_loaded(model)
    assert bilm is get_bilm(model) and bilm is not None
    assert ensure_loaded(model) is bilm and loads == [1]


def test_run_segments_batches_longest_first_within_the_bounds_and_returns_outputs_in_segment_order():
    vocab = Vocab()
    docs = [Doc(vocab, words=["a", "b", "c", "d", "e"], sent_starts=[True, False, False, True, False]), Doc(vocab, words=["f"])]
    calls = []

    def embed_batch(sequences):
        calls.append([len(s) for s in sequences])
        return [" ".join(s) for s in sequences]

    settings = ElmoModelSettings(batch_size=2, max_tokens=1000)
    segments, outputs = run_segments(docs, settings, embed_batch)
    assert [segment.words for segment in segments] == [("a", "b", "c"), ("d", "e"), ("f",)]
    assert outputs == ["a b c", "d e", "f"]
    assert calls == [[3, 2], [1]]
    calls.clear()
    run_segments(docs, ElmoModelSettings(batch_size=8, max_tokens=9), embed_batch)  # (3 + 2 markers) slots per row
    assert calls == [[3], [2, 1]]
