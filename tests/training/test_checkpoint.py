"""Checkpoints are written atomically and restore optimizer state exactly."""

import pytest
import torch

from spacy_elmo.bilm import BiLM, BiLMArchitecture
from spacy_elmo.training import checkpoint as checkpoint_module
from spacy_elmo.training.checkpoint import Checkpoint, latest_checkpoint, read_checkpoint, write_checkpoint
from spacy_elmo.training.optimizer import load_optimizer_state, optimizer_state, trainable_parameters
from spacy_elmo.training.presets import preset_architecture
from spacy_elmo.training.settings import TrainingSettings
from spacy_elmo.training.optimizer import make_optimizer

from .helpers import single_thread  # noqa: F401

pytestmark = pytest.mark.usefixtures("single_thread")


def small_bilm(seed=0) -> BiLM:
    torch.manual_seed(seed)
    bilm = BiLM(BiLMArchitecture.from_options_json(preset_architecture("tiny")))
    bilm.reset_parameters()
    bilm.set_softmax(["<S>", "</S>", "<UNK>", "a", "b"])
    return bilm


def make_checkpoint(bilm: BiLM, step: int) -> Checkpoint:
    return Checkpoint(bilm, {"step": step}, {"rank0/x": torch.arange(3.0)}, {"p/sum": torch.ones(2)}, {"k": 1})


def test_checkpoint_round_trip_and_pruning(tmp_path):
    bilm = small_bilm()
    for step in (10, 20, 30):
        write_checkpoint(tmp_path, step, make_checkpoint(bilm, step), keep=2)
    assert [p.name for p in sorted(tmp_path.iterdir())] == ["step-000000020", "step-000000030"]
    loaded = read_checkpoint(latest_checkpoint(tmp_path))
    assert loaded.state == {"step": 30} and loaded.optimizer_meta == {"k": 1}
    assert torch.equal(loaded.tensors["rank0/x"], torch.arange(3.0))
    assert loaded.bilm.vocab == bilm.vocab
    for name, tensor in bilm.state_dict().items():
        assert torch.equal(loaded.bilm.state_dict()[name], tensor)


def test_a_failed_write_leaves_no_partial_checkpoint(tmp_path, monkeypatch):
    bilm = small_bilm()
    write_checkpoint(tmp_path, 1, make_checkpoint(bilm, 1), keep=5)

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint_module, "save_file", crash)
    with pytest.raises(OSError, match="disk full"):
        write_checkpoint(tmp_path, 2, make_checkpoint(bilm, 2), keep=5)
    assert [p.name for p in tmp_path.iterdir()] == ["step-000000001"]
    assert read_checkpoint(latest_checkpoint(tmp_path)).state == {"step": 1}


def test_leftovers_of_a_killed_writer_are_ignored_and_cleaned(tmp_path):
    bilm = small_bilm()
    write_checkpoint(tmp_path, 1, make_checkpoint(bilm, 1), keep=5)
    (tmp_path / ".tmp-step-000000002" / "model").mkdir(parents=True)
    assert latest_checkpoint(tmp_path).name == "step-000000001"
    write_checkpoint(tmp_path, 3, make_checkpoint(bilm, 3), keep=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-000000001", "step-000000003"]


@pytest.mark.parametrize("name", ["adagrad", "adam"])
def test_optimizer_state_survives_named_tensors(name):
    bilm = small_bilm()
    optimizer = make_optimizer(bilm, TrainingSettings(optimizer=name, learning_rate=0.1))
    names = [n for n, _ in trainable_parameters(bilm)]
    for _ in range(2):
        optimizer.zero_grad()
        sum(p.square().sum() for p in bilm.parameters()).backward()
        optimizer.step()
    tensors, meta = optimizer_state(optimizer, names)
    twin = small_bilm(seed=1)
    twin.load_state_dict(bilm.state_dict())
    restored = make_optimizer(twin, TrainingSettings(optimizer=name, learning_rate=0.1))
    load_optimizer_state(restored, names, tensors, meta)
    for model, opt in ((bilm, optimizer), (twin, restored)):
        opt.zero_grad()
        sum(p.square().sum() for p in model.parameters()).backward()
        opt.step()
    for a, b in zip(bilm.state_dict().values(), twin.state_dict().values()):
        assert torch.equal(a, b)
