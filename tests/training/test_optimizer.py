"""Optimizers by name over the parameters in name order, and their state without pickle."""

import json

import pytest
import torch
from torch import nn

from spacy_elmo.training.optimizer import load_optimizer_state, make_optimizer, optimizer_state, trainable_parameters
from spacy_elmo.training.settings import TrainingSettings


class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.zeta = nn.Parameter(torch.tensor([1.0, 2.0]))
        self.alpha = nn.Parameter(torch.tensor([3.0]))


def test_parameters_are_in_name_order():
    assert [name for name, _ in trainable_parameters(Two())] == ["alpha", "zeta"]


@pytest.mark.parametrize("name,kind", [("adagrad", torch.optim.Adagrad), ("adam", torch.optim.Adam), ("sgd", torch.optim.SGD)])
def test_make_optimizer_by_name_with_the_settings_rate(name, kind):
    optimizer = make_optimizer(Two(), TrainingSettings(optimizer=name, learning_rate=0.5))
    assert type(optimizer) is kind and optimizer.param_groups[0]["lr"] == 0.5


def test_adagrad_state_round_trips_through_named_tensors_and_json():
    model = Two()
    optimizer = make_optimizer(model, TrainingSettings(initial_accumulator=1.0))
    model.zeta.sum().backward()
    optimizer.step()
    names = [name for name, _ in trainable_parameters(model)]
    tensors, meta = optimizer_state(optimizer, names)
    assert sorted(tensors) == ["alpha/step", "alpha/sum", "zeta/step", "zeta/sum"]
    assert torch.equal(tensors["zeta/sum"], torch.tensor([2.0, 2.0]))  # 1.0 + gradient 1²
    meta = json.loads(json.dumps(meta))
    assert meta["param_groups"][0]["params"] == ["alpha", "zeta"]
    fresh = Two()
    restored = make_optimizer(fresh, TrainingSettings())
    load_optimizer_state(restored, names, tensors, meta)
    assert torch.equal(restored.state[fresh.zeta]["sum"], torch.tensor([2.0, 2.0]))
