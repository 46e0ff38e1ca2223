"""The biLM architecture (`BiLMArchitecture`): the sizes and switches of a biLM, read from and
written to the dict of bilm-tf's ``options.json`` (`from_options_json`, `to_options_json`)."""
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from .errors import ModelFormatError

ACTIVATIONS = ("relu", "tanh")
N_CHARACTERS = (261, 262)


@dataclass(frozen=True)
class BiLMArchitecture:
    """Sizes and switches of an ELMo biLM: its architecture (the ``options.json`` of bilm-tf / AllenNLP
    holds one; a preset is a named one).

    char_embedding_dim (int): E, width of the character embedding.
    filters (Tuple[Tuple[int, int], ...]): (width, count) of each character convolution.
    n_highway (int): number of highway layers after the character CNN.
    max_characters_per_token (int): M, characters per token including begin/end of word.
    activation (str): "relu" or "tanh", applied to the pooled convolutions.
    lstm_dim (int): C, LSTM cell size.
    projection_dim (int): P, width of the token embedding and of each LSTM output.
    n_layers (int): LSTM layers per direction.
    cell_clip (Optional[float]): clip the LSTM cell to [-cell_clip, cell_clip].
    proj_clip (Optional[float]): clip the projected LSTM output to [-proj_clip, proj_clip].
    use_skip_connections (bool): add each LSTM layer's input to its output (layers after the first).
    n_characters (int): 262 (inference options) or 261 (training options); both load the same way.
    """

    char_embedding_dim: int = 16
    filters: Tuple[Tuple[int, int], ...] = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256), (6, 512), (7, 1024))
    n_highway: int = 2
    max_characters_per_token: int = 50
    activation: str = "relu"
    lstm_dim: int = 4096
    projection_dim: int = 512
    n_layers: int = 2
    cell_clip: Optional[float] = 3.0
    proj_clip: Optional[float] = 3.0
    use_skip_connections: bool = True
    n_characters: int = 262
    extra: Dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        problems = []
        if self.activation not in ACTIVATIONS:
            problems.append(f"char_cnn.activation is {self.activation!r}; expected one of {ACTIVATIONS}")
        if self.n_characters not in N_CHARACTERS:
            problems.append(f"char_cnn.n_characters is {self.n_characters}; expected 261 or 262")
        if not self.filters:
            problems.append("char_cnn.filters is empty")
        for width, count in self.filters:
            if not (1 <= width <= self.max_characters_per_token) or count < 1:
                problems.append(f"char_cnn.filters has an invalid entry [{width}, {count}]")
        if self.max_characters_per_token < 3:
            problems.append("char_cnn.max_characters_per_token must be at least 3")
        for name in ("char_embedding_dim", "lstm_dim", "projection_dim", "n_layers"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be positive, got {getattr(self, name)}")
        if self.n_highway < 0:
            problems.append(f"char_cnn.n_highway must be >= 0, got {self.n_highway}")
        if self.projection_dim > self.lstm_dim:
            problems.append(
                f"lstm.projection_dim ({self.projection_dim}) is larger than lstm.dim "
                f"({self.lstm_dim}); the original format only projects down"
            )
        for name in ("cell_clip", "proj_clip"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                problems.append(f"lstm.{name} must be positive or null, got {value}")
        if problems:
            raise ModelFormatError("invalid biLM options: " + "; ".join(problems))

    @property
    def n_filters(self) -> int:
        """F, the width of the character CNN output."""
        return sum(count for _, count in self.filters)

    @property
    def max_filter_width(self) -> int:
        return max(width for width, _ in self.filters)

    @property
    def has_token_projection(self) -> bool:
        """bilm-tf projects the CNN output only when its width differs from P."""
        return self.n_filters != self.projection_dim

    @property
    def has_lstm_projection(self) -> bool:
        """bilm-tf builds LSTM cells with a projection only when P < C."""
        return self.projection_dim < self.lstm_dim

    @property
    def output_dim(self) -> int:
        """Width of every output layer: forward and backward halves, 2·P."""
        return 2 * self.projection_dim

    @property
    def n_output_layers(self) -> int:
        """The token layer plus one layer per LSTM layer."""
        return self.n_layers + 1

    @classmethod
    def from_options_json(cls, options: Dict[str, Any], source: str = "options") -> "BiLMArchitecture":
        """Read the dict of a bilm-tf ``options.json``; `source` names the file in errors."""
        if not isinstance(options, dict):
            raise ModelFormatError(f"{source}: expected a JSON object, got {type(options).__name__}")
        lstm = _section(options, "lstm", source)
        cnn = _section(options, "char_cnn", source)
        embedding = _section(cnn, "embedding", source, prefix="char_cnn.")
        try:
            filters = tuple((int(w), int(n)) for w, n in _required(cnn, "filters", source, "char_cnn."))
        except (TypeError, ValueError):
            raise ModelFormatError(f"{source}: char_cnn.filters must be a list of [width, count] pairs") from None
        known_lstm = {"dim", "projection_dim", "n_layers", "cell_clip", "proj_clip", "use_skip_connections"}
        known_cnn = {"embedding", "filters", "n_highway", "max_characters_per_token", "activation", "n_characters"}
        extra = {k: v for k, v in options.items() if k not in ("lstm", "char_cnn")}
        extra.update({f"lstm.{k}": v for k, v in lstm.items() if k not in known_lstm})
        extra.update({f"char_cnn.{k}": v for k, v in cnn.items() if k not in known_cnn})
        char_embedding_dim = _required(embedding, "dim", source, "char_cnn.embedding.")
        max_characters_per_token = _required(cnn, "max_characters_per_token", source, "char_cnn.")
        lstm_dim = _required(lstm, "dim", source, "lstm.")
        try:
            return cls(
                char_embedding_dim=int(char_embedding_dim),
                filters=filters,
                n_highway=int(cnn.get("n_highway") or 0),
                max_characters_per_token=int(max_characters_per_token),
                activation=str(cnn.get("activation", "relu")),
                lstm_dim=int(lstm_dim),
                projection_dim=int(lstm.get("projection_dim") or lstm_dim),
                n_layers=int(lstm.get("n_layers", 1)),
                cell_clip=_optional_float(lstm.get("cell_clip")),
                proj_clip=_optional_float(lstm.get("proj_clip")),
                use_skip_connections=bool(lstm.get("use_skip_connections", False)),
                n_characters=int(cnn.get("n_characters", 262)),
                extra=extra,
            )
        except ModelFormatError as err:
            raise ModelFormatError(f"{source}: {err}") from None
        except (TypeError, ValueError) as err:
            raise ModelFormatError(f"{source}: invalid value in options ({err})") from None

    def to_options_json(self, n_characters: int = 262) -> Dict[str, Any]:
        """Write the dict of a bilm-tf ``options.json`` (inference options: n_characters 262)."""
        options: Dict[str, Any] = {
            "lstm": {
                "dim": self.lstm_dim,
                "projection_dim": self.projection_dim,
                "n_layers": self.n_layers,
                "cell_clip": self.cell_clip,
                "proj_clip": self.proj_clip,
                "use_skip_connections": self.use_skip_connections,
            },
            "char_cnn": {
                "activation": self.activation,
                "filters": [list(f) for f in self.filters],
                "n_highway": self.n_highway,
                "embedding": {"dim": self.char_embedding_dim},
                "n_characters": n_characters,
                "max_characters_per_token": self.max_characters_per_token,
            },
        }
        for key, value in self.extra.items():
            section, _, name = key.partition(".")
            if name and section in options:
                options[section][name] = value
            elif not name:
                options[key] = value
        return options


def _section(options: Dict[str, Any], key: str, source: str, prefix: str = "") -> Dict[str, Any]:
    value = _required(options, key, source, prefix)
    if not isinstance(value, dict):
        raise ModelFormatError(f"{source}: {prefix}{key} must be an object")
    return value


def _required(options: Dict[str, Any], key: str, source: str, prefix: str = "") -> Any:
    if key not in options:
        raise ModelFormatError(f"{source}: missing key '{prefix}{key}'")
    return options[key]


def _optional_float(value: Any) -> Optional[float]:
    return None if value is None else float(value)

