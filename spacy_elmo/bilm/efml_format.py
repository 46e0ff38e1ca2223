"""ELMoForManyLangs model folders (HIT-SCIR/ELMoForManyLangs, Che et al., 2018).

A folder holds ``config.json`` (the training arguments; "config_path" names the architecture
JSON), ``char.dic`` and ``word.dic`` ("token<TAB>id" lines) and the state dicts
``token_embedder.pkl`` and ``encoder.pkl``. The state dicts are read with
``torch.load(weights_only=True)``: tensors only, never arbitrary pickled objects.
"""
import pickle
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

import torch

from ..paths import PathLike
from .architecture import BiLMArchitecture
from .errors import ModelFormatError
from .json_file import read_json_file
from .lexicon import OPTIONS_KEY, Lexicon
from .model import BiLM

TRAINING_ARGUMENTS = "config.json"
CHARACTERS_FILE, WORDS_FILE = "char.dic", "word.dic"
TOKEN_EMBEDDER_FILE, ENCODER_FILE = "token_embedder.pkl", "encoder.pkl"
# The architecture files that the elmoformanylangs package ships (elmoformanylangs/configs/);
# the published models' config.json name one of them by an absolute path of the authors' machine.
_SAMPLE = {
    "encoder": {"name": "elmo", "projection_dim": 512, "cell_clip": 3, "proj_clip": 3, "dim": 4096, "n_layers": 2},
    "token_embedder": {
        "name": "cnn",
        "activation": "relu",
        "filters": [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]],
        "n_highway": 2,
        "word_dim": 100,
        "char_dim": 50,
        "max_characters_per_token": 50,
    },
    "classifier": {"name": "sampled_softmax", "n_samples": 8192},
    "dropout": 0.1,
}
PACKAGE_ARCHITECTURES = {"cnn_50_100_512_4096_sample.json": _SAMPLE, "cnn_0_100_512_4096_sample.json": _SAMPLE}
INTEGER_KEYS = (
    ("encoder", "projection_dim"),
    ("encoder", "dim"),
    ("encoder", "n_layers"),
    ("token_embedder", "n_highway"),
    ("token_embedder", "char_dim"),
    ("token_embedder", "word_dim"),
    ("token_embedder", "max_characters_per_token"),
)
# AllenNLP's LSTM gate blocks are (input, forget, memory, output); ours (i, f, o, g): see lstm.py.
ALLENNLP_TO_OURS = (0, 1, 3, 2)


def is_efml_folder(path: Path) -> bool:
    """Whether `path` looks like an ELMoForManyLangs model folder."""
    return path.is_dir() and any((path / name).is_file() for name in (TOKEN_EMBEDDER_FILE, ENCODER_FILE, CHARACTERS_FILE))


def load_efml(folder: PathLike) -> BiLM:
    """Load an ELMoForManyLangs model folder as a biLM computing the original's three layers."""
    folder = Path(folder)
    for name in (TRAINING_ARGUMENTS, CHARACTERS_FILE, TOKEN_EMBEDDER_FILE, ENCODER_FILE):
        if not (folder / name).is_file():
            raise ModelFormatError(f"{folder}: an ELMoForManyLangs model folder needs {name}, which is missing")
    architecture, source = read_architecture(folder)
    embedder = _read_state_dict(folder / TOKEN_EMBEDDER_FILE)
    encoder = _read_state_dict(folder / ENCODER_FILE)
    sizes = architecture["token_embedder"]
    word_dim = sizes.get("word_dim", 0)
    n_characters = _rows(embedder, "char_emb_layer.embedding.weight", folder / TOKEN_EMBEDDER_FILE)
    characters = read_dic(folder / CHARACTERS_FILE, n_characters)
    words: Dict[str, int] = {}
    n_words = 0
    if word_dim:
        if not (folder / WORDS_FILE).is_file():
            raise ModelFormatError(f"{folder}: {source} gives token_embedder.word_dim > 0, but {WORDS_FILE} is missing")
        n_words = _rows(embedder, "word_emb_layer.embedding.weight", folder / TOKEN_EMBEDDER_FILE)
        words = read_dic(folder / WORDS_FILE, n_words)
    try:
        lexicon = Lexicon(characters, n_characters, words, n_words, word_dim, sizes["max_characters_per_token"])
    except ModelFormatError as err:
        raise ModelFormatError(f"{folder}: {err}") from None
    config = _config(architecture, lexicon, source)
    bilm = BiLM(config)
    _fill(bilm, embedder, encoder, folder)
    return bilm.eval()


def read_architecture(folder: Path) -> Tuple[Dict[str, Any], str]:
    """The architecture JSON that config.json's "config_path" names, found as the original does:
    in the folder (by its path, then by its file name), else among the package's own files."""
    arguments_path = folder / TRAINING_ARGUMENTS
    arguments = read_json_file(arguments_path)
    config_path = arguments.get("config_path") if isinstance(arguments, dict) else None
    if not isinstance(config_path, str) or not config_path:
        raise ModelFormatError(f"{arguments_path}: missing key 'config_path' (the architecture file)")
    file_name = Path(config_path.replace("\\", "/")).name
    candidates = [folder / file_name] if Path(config_path).is_absolute() else [folder / config_path, folder / file_name]
    found = next((path for path in candidates if path.is_file()), None)
    if found is not None:
        architecture, source = read_json_file(found), str(found)
    elif file_name in PACKAGE_ARCHITECTURES:
        architecture, source = PACKAGE_ARCHITECTURES[file_name], f"elmoformanylangs/configs/{file_name}"
    else:
        raise ModelFormatError(
            f"{arguments_path}: config_path {config_path!r} is neither in {folder} nor one of the "
            f"elmoformanylangs package's files ({', '.join(PACKAGE_ARCHITECTURES)}); copy it into the folder"
        )
    _check_architecture(architecture, source)
    return architecture, source


def read_dic(path: Path, n_rows: int) -> Dict[str, int]:
    """A ``.dic`` file as the original reads it: "token<TAB>id" lines, stripped; a line with only
    an id is the space character, which the original maps to U+3000 (ideographic space)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ModelFormatError(f"{path}: not UTF-8 ({err.reason} at byte {err.start})") from None
    vocabulary: Dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        fields = line.strip().split("\t")
        if fields == [""]:
            continue
        if len(fields) == 1:
            fields.insert(0, "\u3000")
        index = int(fields[1]) if len(fields) == 2 and fields[1].isdecimal() else -1
        if index < 0:
            raise ModelFormatError(f"{path}, line {number}: expected 'token<TAB>id', got {line!r}")
        token = fields[0]
        if index >= n_rows:
            raise ModelFormatError(
                f"{path}, line {number}: id {index} of {token!r} is beyond the embedding matrix ({n_rows} rows)"
            )
        vocabulary[token] = index
    return vocabulary


def _check_architecture(architecture: Any, source: str) -> None:
    required = {
        "encoder": ("name", "projection_dim", "dim", "n_layers"),
        "token_embedder": ("name", "filters", "n_highway", "char_dim", "max_characters_per_token"),
    }
    for section, keys in required.items():
        if not isinstance(architecture, dict) or not isinstance(architecture.get(section), dict):
            raise ModelFormatError(f"{source}: missing section '{section}'")
        for key in keys:
            if key not in architecture[section]:
                raise ModelFormatError(f"{source}: missing key '{section}.{key}'")
    encoder, embedder = architecture["encoder"], architecture["token_embedder"]
    for section, key in INTEGER_KEYS:
        value = architecture[section].get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ModelFormatError(f"{source}: {section}.{key} must be a non-negative integer, got {value!r}")
    if str(encoder["name"]).lower() != "elmo":
        raise ModelFormatError(f"{source}: encoder.name {encoder['name']!r} is not supported (only 'elmo')")
    if str(embedder["name"]).lower() != "cnn":
        raise ModelFormatError(
            f"{source}: token_embedder.name {embedder['name']!r} is not supported (only 'cnn', the character CNN)"
        )
    if not embedder["char_dim"]:
        raise ModelFormatError(f"{source}: token_embedder.char_dim 0 (words only) is not supported")


def _config(architecture: Dict[str, Any], lexicon: Lexicon, source: str) -> BiLMArchitecture:
    encoder, embedder = architecture["encoder"], architecture["token_embedder"]
    try:
        config = BiLMArchitecture(
            char_embedding_dim=int(embedder["char_dim"]),
            filters=tuple((int(w), int(n)) for w, n in embedder["filters"]),
            n_highway=int(embedder["n_highway"]),
            max_characters_per_token=int(embedder["max_characters_per_token"]),
            activation=str(embedder.get("activation", "relu")),
            lstm_dim=int(encoder["dim"]),
            projection_dim=int(encoder["projection_dim"]),
            n_layers=int(encoder["n_layers"]),
            cell_clip=float(encoder["cell_clip"]) if encoder.get("cell_clip") else None,  # 0: no clipping
            proj_clip=float(encoder["proj_clip"]) if encoder.get("proj_clip") else None,
            use_skip_connections=True,  # ElmobiLm adds each layer's input after the first
            extra={OPTIONS_KEY: lexicon.to_options_json()},
        )
    except ModelFormatError as err:
        raise ModelFormatError(f"{source}: {err}") from None
    except (TypeError, ValueError) as err:
        raise ModelFormatError(f"{source}: invalid value ({err})") from None
    if not config.has_lstm_projection:
        raise ModelFormatError(
            f"{source}: encoder.projection_dim ({config.projection_dim}) must be below encoder.dim ({config.lstm_dim})"
        )
    return config


def _read_state_dict(path: Path) -> Dict[str, torch.Tensor]:
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        raise ModelFormatError(
            f"{path}: holds more than tensors, and is not unpickled for safety "
            f"(torch.load(weights_only=True) refused it: {str(err).splitlines()[0]})"
        ) from None
    except (RuntimeError, OSError, EOFError, ValueError) as err:
        raise ModelFormatError(f"{path}: not a readable torch state dict, truncated or corrupted ({err})") from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ModelFormatError(f"{path}: expected a state dict (names to tensors), got {type(state).__name__}")
    return state


def _rows(state: Dict[str, torch.Tensor], key: str, path: Path) -> int:
    if key not in state or state[key].dim() != 2:
        raise ModelFormatError(f"{path}: missing the 2-d tensor '{key}'")
    return state[key].shape[0]


Transform = Callable[[torch.Tensor], torch.Tensor]


def _fill(bilm: BiLM, embedder: Dict[str, torch.Tensor], encoder: Dict[str, torch.Tensor], folder: Path) -> None:
    """Copy the original state dicts into `bilm`, checking every name and shape."""
    for file_name, state, plan in (
        (TOKEN_EMBEDDER_FILE, embedder, _embedder_plan(bilm)),
        (ENCODER_FILE, encoder, _encoder_plan(bilm)),
    ):
        path = folder / file_name
        missing = [key for key in plan if key not in state]
        if missing:
            raise ModelFormatError(f"{path}: missing tensor '{missing[0]}' ({len(missing)} missing)")
        unexpected = sorted(set(state) - set(plan))
        if unexpected:
            raise ModelFormatError(f"{path}: unexpected tensor '{unexpected[0]}'; does the architecture file match?")
        for key, (target, transform) in plan.items():
            value = state[key]
            if tuple(value.shape) != tuple(target.shape):
                raise ModelFormatError(
                    f"{path}: tensor '{key}' has shape {tuple(value.shape)}, the architecture gives {tuple(target.shape)}"
                )
            if not torch.isfinite(value).all():
                raise ModelFormatError(f"{path}: tensor '{key}' holds NaN or infinite values")
            with torch.no_grad():
                target.copy_(transform(value.float()))


def _embedder_plan(bilm: BiLM) -> Dict[str, Tuple[torch.Tensor, Transform]]:
    encoder = bilm.token_encoder
    width = bilm.config.n_filters
    same: Transform = lambda x: x  # noqa: E731
    plan = {
        "char_emb_layer.embedding.weight": (encoder.char_embedding.weight, same),
        "projection.weight": (encoder.projection.weight, same),
        "projection.bias": (encoder.projection.bias, same),
    }
    if getattr(encoder, "word_embedding", None) is not None:
        plan["word_emb_layer.embedding.weight"] = (encoder.word_embedding.weight, same)
    for i, conv in enumerate(encoder.convolutions):
        plan[f"convolutions.{i}.weight"] = (conv.weight, same)
        plan[f"convolutions.{i}.bias"] = (conv.bias, same)
    # AllenNLP's highway: y = g·x + (1 − g)·f(A·x), g = sigmoid(B·x); ours gates the transform,
    # y = t·f(A·x) + (1 − t)·x, so t = 1 − g = sigmoid(−B·x): the gate half changes sign.
    flip: Transform = lambda x: torch.cat([x[:width], -x[width:]])  # noqa: E731
    for k, highway in enumerate(encoder.highways):
        plan[f"highways._layers.{k}.weight"] = (highway.linear.weight, flip)
        plan[f"highways._layers.{k}.bias"] = (highway.linear.bias, flip)
    return plan


def _encoder_plan(bilm: BiLM) -> Dict[str, Tuple[torch.Tensor, Transform]]:
    plan: Dict[str, Tuple[torch.Tensor, Transform]] = {}
    reorder: Transform = lambda x: torch.cat([x.chunk(4, dim=0)[i] for i in ALLENNLP_TO_OURS])  # noqa: E731
    for index, layer in enumerate(bilm.lstm.layers):
        for d, direction in enumerate(("forward", "backward")):
            prefix = f"{direction}_layer_{index}."
            plan[prefix + "input_linearity.weight"] = (layer.input_weight[d], reorder)
            plan[prefix + "state_linearity.weight"] = (layer.recurrent_weight[d], reorder)
            plan[prefix + "state_linearity.bias"] = (layer.bias[d], reorder)
            plan[prefix + "state_projection.weight"] = (layer.projection[d], lambda x: x)
    return plan
