"""The names AllenNLP ELMo users import, on spacy-elmo's biLM: `Elmo`, `batch_to_ids`, `ScalarMix`,
`ElmoEmbedder`. Code written for `allennlp.modules.elmo` / `allennlp.commands.elmo` runs with
the import changed:

    from spacy_elmo.allennlp import Elmo, batch_to_ids      # was: from allennlp.modules.elmo import ...

Differences, on purpose: the biLM is stateless by default (a sentence's vectors do not depend
on the batches before it); `stateful=True` gives AllenNLP's behaviour, where each batch row
starts from the LSTM state the same row ended with in the previous call. The weight files may
also be a bundled model's name or a native model folder (then `options_file` is None).
"""
from .dependencies import require

require("torch", "spacy_elmo.allennlp (the AllenNLP ELMo modules)")

from pathlib import Path  # noqa: E402
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from .bilm import BiLM, load_bilm  # noqa: E402
from .characters import CharacterMapper  # noqa: E402
from .errors import ConfigError  # noqa: E402
from .paths import PathLike  # noqa: E402
from .runtime import check_compute_dtype  # noqa: E402

# AllenNLP's ELMo character ids have 50 characters per token.
MAX_CHARACTERS = 50


def batch_to_ids(batch: List[List[str]]) -> torch.Tensor:
    """Character ids (len(batch), longest, 50) of tokenized sentences; padded token slots are 0."""
    return torch.from_numpy(CharacterMapper(MAX_CHARACTERS).encode_batch(batch))


# AllenNLP's layer-norm epsilon in ScalarMix.
LAYER_NORM_EPS = 1e-13


class ScalarMix(nn.Module):
    """A softmax-normalized weighted sum of layers, scaled by γ.

    n_layers (int): number of layers mixed.
    weights (Optional[Sequence[float]]): pre-softmax weights; None starts equal (all zero).
    gamma (float): the scale γ.
    trainable (bool): whether w and γ are learned.
    layer_norm (bool): normalize each layer first, with one mean and variance over all
        unmasked positions and channels of the batch (AllenNLP's ``do_layer_norm``).
    """

    def __init__(
        self,
        n_layers: int,
        weights: Optional[Sequence[float]] = None,
        gamma: float = 1.0,
        trainable: bool = True,
        layer_norm: bool = False,
    ) -> None:
        super().__init__()
        if weights is None:
            weights = [0.0] * n_layers
        if len(weights) != n_layers:
            raise ValueError(f"ScalarMix: got {len(weights)} weights for {n_layers} layers")
        self.n_layers = n_layers
        self.layer_norm = layer_norm
        self.weights = nn.Parameter(torch.tensor(list(weights), dtype=torch.float32), requires_grad=trainable)
        self.gamma = nn.Parameter(torch.tensor(float(gamma)), requires_grad=trainable)

    def normalized_weights(self) -> torch.Tensor:
        """The softmax-normalized layer weights s_j."""
        return torch.softmax(self.weights, dim=0)

    def forward(self, layers: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Mix layers of shape (n_layers, ..., D) into (..., D).

        mask (Optional[Tensor]): boolean (...) marking real positions, used by layer norm only.
        """
        if layers.shape[0] != self.n_layers:
            raise ValueError(f"ScalarMix: expected {self.n_layers} layers, got {layers.shape[0]}")
        if self.layer_norm:
            layers = torch.stack([self._normalize(layer, mask) for layer in layers])
        weights = self.normalized_weights().to(layers.dtype)
        shape = (self.n_layers,) + (1,) * (layers.dim() - 1)
        return self.gamma.to(layers.dtype) * (weights.view(shape) * layers).sum(dim=0)

    @staticmethod
    def _normalize(layer: torch.Tensor, mask: Optional[torch.Tensor]) -> torch.Tensor:
        if mask is None:
            mask = torch.ones(layer.shape[:-1], dtype=torch.bool, device=layer.device)
        keep = mask.unsqueeze(-1).to(layer.dtype)
        count = keep.sum() * layer.shape[-1]
        mean = (layer * keep).sum() / count
        variance = (((layer - mean) * keep) ** 2).sum() / count
        return (layer - mean) / torch.sqrt(variance + LAYER_NORM_EPS)


class Elmo(nn.Module):
    """ELMo representations: `num_output_representations` learned (or fixed) mixes of the biLM
    layers, as `allennlp.modules.elmo.Elmo` computes them.

    options_file (Optional[PathLike]): the options.json of `weight_file`; None for a bundled
        model's name or a native model folder.
    weight_file (PathLike): original weights .hdf5, a native model folder or a bundled name.
    num_output_representations (int): how many mixes to return.
    requires_grad (bool): fine-tune the biLM's weights.
    do_layer_norm (bool): normalize each layer before mixing.
    dropout (float): on each representation.
    keep_sentence_boundaries (bool): keep the <S> and </S> positions.
    scalar_mix_parameters (Optional[List[float]]): fixed pre-softmax layer weights; None learns them.
    stateful (bool): carry each batch row's LSTM state into the next call (AllenNLP's behaviour).
    dtype (str): the biLM's computation, "float32" (default), "bfloat16", or "int8" (CPU only,
        no fine-tuning: see `load_bilm`); the representations are float32 for int8.
    """

    def __init__(
        self,
        options_file: Optional[PathLike],
        weight_file: PathLike,
        num_output_representations: int,
        requires_grad: bool = False,
        do_layer_norm: bool = False,
        dropout: float = 0.5,
        keep_sentence_boundaries: bool = False,
        scalar_mix_parameters: Optional[List[float]] = None,
        stateful: bool = False,
        dtype: str = "float32",
    ) -> None:
        super().__init__()
        if requires_grad and check_compute_dtype(dtype) == "int8":
            raise ConfigError("Elmo: requires_grad=True fine-tunes the biLM, but an int8 biLM has no gradients; use dtype float32")
        self._bilm: BiLM = load_bilm(weight_file, options=options_file, compute_dtype=dtype)
        self._bilm.drop_softmax()
        self._bilm.requires_grad_(requires_grad)
        self._keep_sentence_boundaries = keep_sentence_boundaries
        self._stateful = stateful
        self._dropout = nn.Dropout(p=dropout)
        trainable = scalar_mix_parameters is None
        self._scalar_mixes = nn.ModuleList(
            ScalarMix(self._bilm.n_layers, scalar_mix_parameters, 1.0, trainable, do_layer_norm)
            for _ in range(num_output_representations)
        )

    def get_output_dim(self) -> int:
        return self._bilm.output_dim

    def reset_states(self) -> None:
        """Forget the carried LSTM states (stateful only)."""
        self._bilm.reset_states()

    def forward(self, inputs: torch.Tensor) -> Dict[str, Union[torch.Tensor, List[torch.Tensor]]]:
        """inputs: character ids (batch, timesteps, 50), or more leading dims, as `batch_to_ids`
        gives. RETURNS: {"elmo_representations": [(batch, timesteps, dim)] * n, "mask": (batch,
        timesteps) bool}, with 2 more timesteps when sentence boundaries are kept."""
        shape = inputs.shape
        char_ids = inputs.reshape(-1, shape[-2], shape[-1]) if inputs.dim() > 3 else inputs
        layers, lengths = self._bilm.char_id_layers(char_ids, stateful=self._stateful)
        layers = layers.transpose(0, 1)  # (n_layers, batch, timesteps + 2, dim)
        steps = torch.arange(layers.shape[2], device=layers.device)
        lengths = lengths.to(layers.device)
        mask_with_boundaries = steps < (lengths + 2).unsqueeze(1)
        representations = []
        for mix in self._scalar_mixes:
            mixed = mix(layers, mask_with_boundaries)
            if self._keep_sentence_boundaries:
                mask = mask_with_boundaries
            else:
                mask = steps[:-2] < lengths.unsqueeze(1)
                mixed = mixed[:, 1:-1] * mask.unsqueeze(-1).to(mixed.dtype)
            representations.append(self._dropout(mixed))
        if inputs.dim() > 3:
            mask = mask.reshape(shape[:-2] + mask.shape[-1:])
            representations = [r.reshape(shape[:-2] + r.shape[-2:]) for r in representations]
        return {"elmo_representations": representations, "mask": mask}


class ElmoEmbedder:
    """All biLM layers of tokenized sentences as numpy arrays (n_layers, n_tokens, dim), as
    `allennlp.commands.elmo.ElmoEmbedder` gives them.

    options_file, weight_file: as for `Elmo` (weight_file None: the bundled default model).
    cuda_device (int): -1 for the CPU, else the CUDA device index.
    stateful (bool): AllenNLP's carried LSTM state between batches.
    dtype (str): the biLM's computation, "float32" (default), "bfloat16" or "int8" (CPU only).
    """

    def __init__(
        self,
        options_file: Optional[PathLike] = None,
        weight_file: Optional[PathLike] = None,
        cuda_device: int = -1,
        stateful: bool = False,
        dtype: str = "float32",
    ) -> None:
        device = "cpu" if cuda_device < 0 else f"cuda:{cuda_device}"
        self.bilm = load_bilm(weight_file, options=options_file, device=device, compute_dtype=dtype)
        self.bilm.drop_softmax()
        self.stateful = stateful

    def batch_to_embeddings(self, batch: List[List[str]]) -> Tuple[torch.Tensor, torch.Tensor]:
        """Layers (batch, n_layers, timesteps, dim) without the sentence markers, and the mask."""
        with torch.no_grad():
            layers, lengths = self.bilm.char_id_layers(batch_to_ids(batch), stateful=self.stateful)
        steps = torch.arange(layers.shape[2] - 2, device=layers.device)
        mask = steps < lengths.to(layers.device).unsqueeze(1)
        return layers[:, :, 1:-1] * mask[:, None, :, None].to(layers.dtype), mask

    def embed_sentence(self, sentence: List[str]) -> np.ndarray:
        """(n_layers, len(sentence), dim) for one sentence."""
        return self.embed_batch([sentence])[0]

    def embed_batch(self, batch: List[List[str]]) -> List[np.ndarray]:
        """One (n_layers, n_tokens, dim) array per sentence; an empty sentence gives (n_layers, 0, dim)."""
        if not any(batch):
            return [np.zeros((self.bilm.n_layers, 0, self.bilm.output_dim), dtype=np.float32) for _ in batch]
        layers, mask = self.batch_to_embeddings(batch)
        layers = layers.float().cpu().numpy()
        return [layers[i, :, : len(sentence)].copy() for i, sentence in enumerate(batch)]

    def embed_sentences(self, sentences: Iterable[List[str]], batch_size: int = 64) -> Iterator[np.ndarray]:
        """The arrays of `sentences`, computed `batch_size` at a time, in order."""
        batch: List[List[str]] = []
        for sentence in sentences:
            batch.append(sentence)
            if len(batch) == batch_size:
                yield from self.embed_batch(batch)
                batch = []
        if batch:
            yield from self.embed_batch(batch)

    def embed_file(
        self,
        input_file: Union[PathLike, Iterable[str]],
        output_file_path: PathLike,
        output_format: str = "all",
        batch_size: int = 64,
        forget_sentences: bool = False,
        use_sentence_keys: bool = False,
    ) -> None:
        """Embed each line (whitespace-tokenized) of a text file into hdf5, as AllenNLP's
        `elmo` command, with its one writer (`spacy_elmo.embed.hdf5_file`): a dataset per line
        index (or the line itself with `use_sentence_keys`) holding "all" layers, the "top" one
        or their "average"; and "sentence_to_index" (line → index, the last of equal lines)
        unless `forget_sentences` or `use_sentence_keys`. Blank lines are refused."""
        from .embed.hdf5_file import check_lines, write_embedding_file
        from .layer_choice import ALL_LAYERS, check_layer_choice, layer_coefficients, select_layers

        check_layer_choice(output_format, allow_all=True, name="output_format")
        coefficients = None if output_format == ALL_LAYERS else layer_coefficients(output_format, self.bilm.n_layers, name="output_format")

        if isinstance(input_file, (str, Path)):
            with open(input_file, encoding="utf8") as handle:
                lines = [line.strip() for line in handle]
        else:
            lines = [line.strip() for line in input_file]
        check_lines(lines, input_file if isinstance(input_file, (str, Path)) else "the input")
        vectors = (select_layers(layers, coefficients) for layers in self.embed_sentences((line.split() for line in lines), batch_size))
        write_embedding_file(
            output_file_path, zip(lines, vectors), forget_sentences=forget_sentences, use_sentence_keys=use_sentence_keys
        )


__all__ = ["Elmo", "ElmoEmbedder", "batch_to_ids"]
