"""The original weight format: bilm-tf's ``options.json`` + the hdf5 that its `dump_weights`
writes (as AllenNLP's `_ElmoCharacterEncoder` and `_ElmoBiLm` read it)."""
import json
from pathlib import Path
from typing import Callable, Dict, Tuple

import h5py
import numpy as np
import torch

from ..paths import PathLike
from .architecture import BiLMArchitecture
from .errors import ModelFormatError
from .json_file import read_json_file
from .lexicon import Lexicon
from .model import BiLM

# TensorFlow's LSTM gate blocks are (i, j, f, o); ours are (i, f, o, j): see lstm.py.
TF_TO_OURS = (0, 2, 3, 1)
OURS_TO_TF = (0, 3, 1, 2)
TF_FORGET_BIAS = 1.0


def read_options(path: PathLike) -> BiLMArchitecture:
    """Read an ``options.json`` into a BiLMArchitecture, with errors that name the file."""
    path = Path(path)
    if not path.is_file():
        raise ModelFormatError(f"{path}: options file not found")
    return BiLMArchitecture.from_options_json(read_json_file(path), source=str(path))


def load_original(weights: PathLike, options: PathLike) -> BiLM:
    """Load a biLM from bilm-tf's weight dump and its options (AllenNLP's format too)."""
    config = read_options(options)
    weights = Path(weights)
    bilm = BiLM(config)
    setters = _parameter_map(bilm)
    try:
        handle = h5py.File(weights, "r")
    except FileNotFoundError:
        raise ModelFormatError(f"{weights}: weights file not found") from None
    except OSError as err:
        raise ModelFormatError(f"{weights}: not a readable HDF5 file, truncated or corrupted ({err})") from None
    with handle:
        names = _dataset_names(handle, weights)
        if config.n_layers == 1:
            setters = _single_layer_names(setters, names)
        missing = [name for name in setters if name not in names]
        if missing:
            raise ModelFormatError(
                f"{weights}: missing dataset '{missing[0]}' (expected shape {setters[missing[0]][0]}); "
                f"{len(missing)} of {len(setters)} datasets that {options} describes are missing"
            )
        unexpected = sorted(set(names) - set(setters))
        if unexpected:
            raise ModelFormatError(
                f"{weights}: dataset '{unexpected[0]}' is not described by the options in {options} "
                f"({len(unexpected)} unexpected datasets); do the options belong to these weights?"
            )
        for name, (shape, setter) in setters.items():
            setter(_read(handle, name, shape, weights, options))
    bilm.eval()
    return bilm


def check_exportable(bilm: BiLM) -> None:
    """Raise a ModelFormatError if bilm-tf's format cannot hold this biLM."""
    if isinstance(bilm.characters, Lexicon):
        raise ModelFormatError(
            "this biLM has a learned character vocabulary and word embeddings (ELMoForManyLangs), "
            "which bilm-tf's format cannot hold; save it as a native folder (save_bilm) instead"
        )


def export_original(bilm: BiLM, folder: PathLike, weights_name: str = "weights.hdf5") -> Tuple[Path, Path]:
    """Write ``options.json`` + an hdf5 in bilm-tf's layout; returns their paths."""
    check_exportable(bilm)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    options_path = folder / "options.json"
    weights_path = folder / weights_name
    options_path.write_text(json.dumps(bilm.config.to_options_json(), indent=2), encoding="utf-8")
    with h5py.File(weights_path, "w") as handle:
        for name, array in _original_arrays(bilm).items():
            handle.create_dataset(name, data=array)
    return options_path, weights_path


def _dataset_names(handle: h5py.File, path: Path) -> Dict[str, Tuple[int, ...]]:
    names: Dict[str, Tuple[int, ...]] = {}

    def visit(name: str, item: object) -> None:
        if isinstance(item, h5py.Dataset):
            names[name] = item.shape

    try:
        handle.visititems(visit)
    except (OSError, RuntimeError, KeyError) as err:
        raise ModelFormatError(f"{path}: cannot list the datasets, truncated or corrupted ({err})") from None
    return names


def _read(handle: h5py.File, name: str, shape: Tuple[int, ...], path: Path, options: PathLike) -> torch.Tensor:
    dataset = handle[name]
    if tuple(dataset.shape) != shape:
        raise ModelFormatError(
            f"{path}: dataset '{name}' has shape {tuple(dataset.shape)}, but the options in {options} "
            f"give {shape}; do the options belong to these weights?"
        )
    try:
        array = np.asarray(dataset[...], dtype=np.float32)
    except (OSError, RuntimeError, ValueError) as err:
        raise ModelFormatError(f"{path}: cannot read dataset '{name}', truncated or corrupted ({err})") from None
    if not np.isfinite(array).all():
        raise ModelFormatError(f"{path}: dataset '{name}' holds NaN or infinite values")
    return torch.from_numpy(array)


Setter = Callable[[torch.Tensor], None]


def _parameter_map(bilm: BiLM) -> Dict[str, Tuple[Tuple[int, ...], Setter]]:
    """Every hdf5 dataset of the model: its expected shape and how it fills our parameters."""
    config = bilm.config
    encoder = bilm.token_encoder
    width_e, width_f, width_p = config.char_embedding_dim, config.n_filters, config.projection_dim
    entries: Dict[str, Tuple[Tuple[int, ...], Setter]] = {}

    def copy(target: torch.Tensor, transform: Callable[[torch.Tensor], torch.Tensor] = lambda x: x) -> Setter:
        def set_(value: torch.Tensor) -> None:
            with torch.no_grad():
                target.copy_(transform(value))

        return set_

    entries["char_embed"] = ((261, width_e), copy(encoder.char_embedding.weight[1:]))
    with torch.no_grad():
        encoder.char_embedding.weight[0].zero_()
    for i, ((width, count), conv) in enumerate(zip(config.filters, encoder.convolutions)):
        entries[f"CNN/W_cnn_{i}"] = ((1, width, width_e, count), copy(conv.weight, lambda w: w[0].permute(2, 1, 0)))
        entries[f"CNN/b_cnn_{i}"] = ((count,), copy(conv.bias))
    for k, highway in enumerate(encoder.highways):
        weight, bias = highway.linear.weight, highway.linear.bias
        entries[f"CNN_high_{k}/W_transform"] = ((width_f, width_f), copy(weight[:width_f], lambda w: w.T))
        entries[f"CNN_high_{k}/W_carry"] = ((width_f, width_f), copy(weight[width_f:], lambda w: w.T))
        entries[f"CNN_high_{k}/b_transform"] = ((width_f,), copy(bias[:width_f]))
        entries[f"CNN_high_{k}/b_carry"] = ((width_f,), copy(bias[width_f:]))
    if encoder.projection is not None:
        entries["CNN_proj/W_proj"] = ((width_f, width_p), copy(encoder.projection.weight, lambda w: w.T))
        entries["CNN_proj/b_proj"] = ((width_p,), copy(encoder.projection.bias))
    for l, layer in enumerate(bilm.lstm.layers):
        n_in, n_out, cell = layer.input_weight.shape[2], layer.output_dim, layer.cell_dim
        for d in range(2):
            prefix = f"RNN_{d}/RNN/MultiRNNCell/Cell{l}/LSTMCell/"
            entries[prefix + "W_0"] = ((n_in + n_out, 4 * cell), _lstm_kernel_setter(layer, d, n_in))
            entries[prefix + "B"] = ((4 * cell,), copy(layer.bias[d], _bias_from_tf))
            if layer.projection is not None:
                entries[prefix + "W_P_0"] = ((cell, n_out), copy(layer.projection[d], lambda w: w.T))
    return entries


def _single_layer_names(setters: Dict, names: Dict) -> Dict:
    """bilm-tf names a one-layer LSTM without MultiRNNCell/Cell0; accept either."""
    renamed = {}
    for name, entry in setters.items():
        alternative = name.replace("MultiRNNCell/Cell0/", "")
        renamed[alternative if name not in names and alternative in names else name] = entry
    return renamed


def _lstm_kernel_setter(layer: torch.nn.Module, direction: int, n_in: int) -> Setter:
    def set_(kernel: torch.Tensor) -> None:
        with torch.no_grad():
            layer.input_weight[direction].copy_(_reorder(kernel[:n_in].T, TF_TO_OURS))
            layer.recurrent_weight[direction].copy_(_reorder(kernel[n_in:].T, TF_TO_OURS))

    return set_


def _bias_from_tf(bias: torch.Tensor) -> torch.Tensor:
    bias = bias.clone()
    cell = bias.shape[0] // 4
    bias[2 * cell : 3 * cell] += TF_FORGET_BIAS  # TF block order: f is the third block
    return _reorder(bias, TF_TO_OURS)


def _bias_to_tf(bias: torch.Tensor) -> torch.Tensor:
    bias = _reorder(bias, OURS_TO_TF).clone()
    cell = bias.shape[0] // 4
    bias[2 * cell : 3 * cell] -= TF_FORGET_BIAS
    return bias


def _reorder(blocks: torch.Tensor, order: Tuple[int, ...]) -> torch.Tensor:
    """Permute the four gate blocks along the first axis."""
    return torch.cat([blocks.chunk(4, dim=0)[i] for i in order])


def _original_arrays(bilm: BiLM) -> Dict[str, np.ndarray]:
    """The inverse of `_parameter_map`: every dataset of the original layout as float32 arrays."""
    encoder = bilm.token_encoder
    config = bilm.config
    width_f = config.n_filters

    def array(tensor: torch.Tensor) -> np.ndarray:
        return tensor.detach().float().cpu().contiguous().numpy()

    arrays = {"char_embed": array(encoder.char_embedding.weight[1:])}
    for i, conv in enumerate(encoder.convolutions):
        arrays[f"CNN/W_cnn_{i}"] = array(conv.weight.permute(2, 1, 0).unsqueeze(0))
        arrays[f"CNN/b_cnn_{i}"] = array(conv.bias)
    for k, highway in enumerate(encoder.highways):
        weight, bias = highway.linear.weight, highway.linear.bias
        arrays[f"CNN_high_{k}/W_transform"] = array(weight[:width_f].T)
        arrays[f"CNN_high_{k}/W_carry"] = array(weight[width_f:].T)
        arrays[f"CNN_high_{k}/b_transform"] = array(bias[:width_f])
        arrays[f"CNN_high_{k}/b_carry"] = array(bias[width_f:])
    if encoder.projection is not None:
        arrays["CNN_proj/W_proj"] = array(encoder.projection.weight.T)
        arrays["CNN_proj/b_proj"] = array(encoder.projection.bias)
    for l, layer in enumerate(bilm.lstm.layers):
        for d in range(2):
            prefix = f"RNN_{d}/RNN/MultiRNNCell/Cell{l}/LSTMCell/"
            kernel = torch.cat(
                [_reorder(layer.input_weight[d], OURS_TO_TF).T, _reorder(layer.recurrent_weight[d], OURS_TO_TF).T]
            )
            arrays[prefix + "W_0"] = array(kernel)
            arrays[prefix + "B"] = array(_bias_to_tf(layer.bias[d].detach()))
            if layer.projection is not None:
                arrays[prefix + "W_P_0"] = array(layer.projection[d].T)
    return arrays
