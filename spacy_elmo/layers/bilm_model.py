"""A thinc Model around the biLM: token sequences in, all layers per sequence out.

The torch module lives in a `PyTorchShim` (so a fine-tuned biLM is updated by the pipeline's
optimizer) that serializes it as safetensors bytes, never pickle. The biLM is attached after
construction (`set_bilm`), when the component loads weights or deserializes.
"""
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np
from thinc.api import ArgsKwargs, Model, PyTorchShim

Sequences = Sequence[Sequence[str]]
BiLMOutputs = List[np.ndarray]


def build_bilm_model(batch_size: int, max_tokens: int) -> Model[Sequences, BiLMOutputs]:
    """Create the wrapper, still without a biLM.

    batch_size (int): most sequences per forward pass.
    max_tokens (int): most padded token slots (sequences × longest) per forward pass.
    """
    shim = PyTorchShim(None, serialize_model=_serialize, deserialize_model=_deserialize)
    attrs = {"batch_size": batch_size, "max_tokens": max_tokens, "replace_listener_cfg": _no_replace_listeners}
    return Model("elmo_bilm", forward, shims=[shim], attrs=attrs)


def get_bilm(model: Model) -> Any:
    """The wrapped biLM, or None before weights are loaded."""
    return model.shims[0]._model


def set_bilm(model: Model, bilm: Any) -> None:
    """Attach a loaded biLM."""
    model.shims[0]._model = bilm


def forward(model: Model[Sequences, BiLMOutputs], sequences: Sequences, is_train: bool) -> Tuple[BiLMOutputs, Callable]:
    """Per sequence a float32 array (n_layers, n_tokens, width); differentiable when training."""
    bilm = get_bilm(model)
    batch_size, max_tokens = model.attrs["batch_size"], model.attrs["max_tokens"]
    if not is_train:
        bilm.eval()
        return bilm.embed_sentences(sequences, batch_size=batch_size, max_tokens=max_tokens), _no_backprop
    shim = model.shims[0]
    outputs: List[Optional[np.ndarray]] = [None] * len(sequences)
    steps = []
    for batch in _length_batches(sequences, batch_size, max_tokens):
        tensors, backprop_batch = shim.begin_update(ArgsKwargs(args=([sequences[i] for i in batch],), kwargs={}))
        for i, tensor in zip(batch, tensors):
            outputs[i] = tensor.detach().float().cpu().numpy()
        steps.append((batch, tensors, backprop_batch))
    bilm.eval()

    def backprop(d_outputs: BiLMOutputs) -> List:
        import torch

        for batch, tensors, backprop_batch in steps:
            grads = [
                torch.as_tensor(model.ops.to_numpy(d_outputs[i]), device=t.device).to(t.dtype)
                for i, t in zip(batch, tensors)
            ]
            backprop_batch(ArgsKwargs(args=(tensors,), kwargs={"grad_tensors": grads}))
        return []

    return outputs, backprop  # type: ignore[return-value]


def _length_batches(sequences: Sequences, batch_size: int, max_tokens: int) -> List[List[int]]:
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]), reverse=True)
    batches, start = [], 0
    while start < len(order):
        rows = max(1, min(batch_size, max_tokens // (len(sequences[order[start]]) + 2)))
        batches.append(order[start : start + rows])
        start += rows
    return batches


def _no_replace_listeners(*_: Any) -> None:
    """spaCy's `replace_listeners` hook: not supported, so fail before changing any config."""
    raise ValueError(
        "elmo: replace_listeners is not supported; keep the 'elmo' component in the pipeline "
        "(when sourcing a trained listener, source 'elmo' from the same pipeline)"
    )


def _no_backprop(_: Any) -> List:
    return []


def _serialize(bilm: Any) -> bytes:
    if bilm is None:
        return b""
    from ..bilm import bilm_to_bytes

    return bilm_to_bytes(bilm)


def _deserialize(_: Any, data: bytes, device: Any) -> Any:
    if not data:
        return None
    from ..bilm import bilm_from_bytes

    return bilm_from_bytes(data).to(device)
