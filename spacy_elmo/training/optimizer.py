"""Optimizers by name, and their state as named tensors + JSON (no pickle)."""

from typing import Any, Dict, List, Tuple

import torch
from torch import nn

from .settings import TrainingSettings


def trainable_parameters(model: nn.Module) -> List[Tuple[str, nn.Parameter]]:
    """Parameters sorted by name, so the order does not depend on how the model was built."""
    return sorted(model.named_parameters(), key=lambda item: item[0])


def make_optimizer(model: nn.Module, settings: TrainingSettings) -> torch.optim.Optimizer:
    """Adagrad (bilm-tf: lr 0.2, initial accumulator 1.0), Adam or SGD over the model's parameters."""
    params = [p for _, p in trainable_parameters(model)]
    if settings.optimizer == "adagrad":
        return torch.optim.Adagrad(
            params, lr=settings.learning_rate, initial_accumulator_value=settings.initial_accumulator
        )
    if settings.optimizer == "adam":
        return torch.optim.Adam(params, lr=settings.learning_rate)
    return torch.optim.SGD(params, lr=settings.learning_rate)


def optimizer_state(
    optimizer: torch.optim.Optimizer, names: List[str]
) -> Tuple[Dict[str, torch.Tensor], Dict[str, Any]]:
    """Split the state into tensors keyed "parameter name/field" and a JSON-able rest."""
    state = optimizer.state_dict()
    tensors: Dict[str, torch.Tensor] = {}
    scalars: Dict[str, Dict[str, Any]] = {}
    for index, fields in state["state"].items():
        for key, value in fields.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{names[index]}/{key}"] = value.detach().to("cpu", copy=True).contiguous()
            else:
                scalars.setdefault(names[index], {})[key] = value
    groups = [{**group, "params": [names[i] for i in group["params"]]} for group in state["param_groups"]]
    return tensors, {"param_groups": groups, "scalars": scalars}


def load_optimizer_state(
    optimizer: torch.optim.Optimizer, names: List[str], tensors: Dict[str, torch.Tensor], meta: Dict[str, Any]
) -> None:
    """Restore what `optimizer_state` wrote, for parameters in the order of `names`."""
    index = {name: i for i, name in enumerate(names)}
    state: Dict[int, Dict[str, Any]] = {}
    for key, value in tensors.items():
        name, _, field = key.rpartition("/")
        state.setdefault(index[name], {})[field] = value
    for name, fields in meta["scalars"].items():
        state.setdefault(index[name], {}).update(fields)
    groups = [{**group, "params": [index[n] for n in group["params"]]} for group in meta["param_groups"]]
    optimizer.load_state_dict({"state": state, "param_groups": groups})
