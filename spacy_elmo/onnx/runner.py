"""`OnnxBiLM`: run a biLM exported by `export_onnx` with ONNX Runtime, without torch."""
import re
import threading
from collections import OrderedDict
from typing import Any, Dict, List, Sequence, Union

import numpy as np
import onnxruntime

from ..batching import Sentences, check_sentences, in_length_batches
from ..characters import CharacterMapper
from ..errors import SpacyElmoError
from ..paths import PathLike
from ..runtime import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS
from .interface import FORMAT_VERSION, INPUT_NAME, INPUT_NAMES, OUTPUT_NAME, OUTPUT_NAMES

# The token cache's bound, as the torch biLM's (`spacy_elmo.bilm.token_cache`, which needs torch).
DEFAULT_CACHE_BYTES = 64 * 2**20

# What ONNX Runtime raises for a model it cannot load (its own classes, not RuntimeError).
_STATE = onnxruntime.capi.onnxruntime_pybind11_state
LOAD_ERRORS = tuple(
    getattr(_STATE, name) for name in ("Fail", "InvalidArgument", "InvalidGraph", "InvalidProtobuf", "NoSuchFile", "NotImplemented", "RuntimeException")
)


class OnnxGraphError(SpacyElmoError):
    """An ONNX graph that ONNX Runtime cannot load, or that is not a biLM written by `export_onnx`."""


class OnnxBiLM:
    """An exported biLM on ONNX Runtime's CPU provider, with the embedding API of `BiLM`
    (stateless only).

    model (Union[PathLike, bytes]): the .onnx file (float32 or quantized), or its bytes.
    threads (int): ONNX Runtime's intra-op threads; 0: its default (one per physical core).
    cache_bytes (int): the bound of the token cache: the embeddings of recently seen token
        strings (least recently used evicted first), so that the graph's character CNN runs only
        on tokens it has not seen; 0: no cache (every distinct token of a batch encoded).
    """

    def __init__(self, model: Union[PathLike, bytes], *, threads: int = 0, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        source = model if isinstance(model, bytes) else str(model)
        try:
            self.session = onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        except LOAD_ERRORS as err:
            raise OnnxGraphError(f"ONNX Runtime {onnxruntime.__version__} cannot load this graph: {_reason(err)}") from None
        model_input, output = _check_interface(self.session.get_inputs(), self.session.get_outputs())
        self.characters = CharacterMapper(model_input.shape[1])
        self.n_layers: int = output.shape[0]
        self.output_dim: int = output.shape[3]
        self.token_dim = self.output_dim // 2
        self.cache_size = cache_bytes // (4 * self.token_dim)
        self._cache: "OrderedDict[str, np.ndarray]" = OrderedDict()
        self._lock = threading.Lock()

    def clear_cache(self) -> None:
        """Forget the cached token embeddings."""
        with self._lock:
            self._cache.clear()

    def embed_sentences(
        self,
        sentences: Sentences,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> List[np.ndarray]:
        """Embed tokenized sentences in length-sorted batches, as `BiLM.embed_sentences`.

        RETURNS (List[np.ndarray]): per sentence a float32 array (n_layers, n_tokens, output_dim).
        """
        return in_length_batches(sentences, self.embed_batch, batch_size, max_tokens)

    def embed_batch(self, sentences: Sentences) -> List[np.ndarray]:
        """Embed one batch in one run of the graph.

        RETURNS (List[np.ndarray]): per sentence a float32 array (n_layers, n_tokens, output_dim).
        """
        check_sentences(sentences)
        n_tokens = max((len(sentence) for sentence in sentences), default=0)
        if n_tokens == 0:  # no tokens at all: the graph's loops need a step
            return [np.zeros((self.n_layers, 0, self.output_dim), dtype=np.float32) for _ in sentences]
        rows: Dict[str, int] = {}
        for sentence in sentences:
            for token in sentence:
                rows.setdefault(token, len(rows))
        known: List[str] = []
        vectors: List[np.ndarray] = []
        with self._lock:
            for token in rows:
                vector = self._cache.get(token)
                if vector is not None:
                    self._cache.move_to_end(token)
                    known.append(token)
                    vectors.append(vector)
        if len(known) == len(rows):  # the graph encodes at least one token
            known.pop()
            vectors.pop()
        found = set(known)
        new = [token for token in rows if token not in found]
        order = {token: row for row, token in enumerate(known + new)}
        token_index = np.zeros((len(sentences), n_tokens), dtype=np.int64)
        for row, sentence in enumerate(sentences):
            token_index[row, : len(sentence)] = [order[token] for token in sentence]
        inputs = {
            INPUT_NAME: self.characters.encode(new),
            INPUT_NAMES[1]: np.stack(vectors) if vectors else np.zeros((0, self.token_dim), dtype=np.float32),
            INPUT_NAMES[2]: token_index,
            INPUT_NAMES[3]: np.array([len(sentence) for sentence in sentences], dtype=np.int64),
        }
        layers, embeddings = self.session.run(None, inputs)
        if self.cache_size > 0:
            with self._lock:
                for token, vector in zip(new, embeddings):
                    self._cache[token] = vector.copy()
                    self._cache.move_to_end(token)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return [layers[:, row, : len(sentence)].copy() for row, sentence in enumerate(sentences)]


def _check_interface(inputs: Sequence[Any], outputs: Sequence[Any]) -> Any:
    """The character input and layers output of a biLM graph (`export_onnx`'s interface, format
    2), else an OnnxGraphError."""
    described = "; ".join(f"{arg.name} {arg.type} {arg.shape}" for arg in [*inputs, *outputs])
    if [arg.name for arg in inputs] == [INPUT_NAME] and [arg.name for arg in outputs] == [OUTPUT_NAME]:
        raise OnnxGraphError(
            f"this ONNX graph is a biLM written by an earlier spacy-elmo (graph format 1: {described}); this one runs "
            f"graph format {FORMAT_VERSION}: export the biLM again (export-onnx, or set-runtime from its torch pipeline)"
        )
    types = ("tensor(int64)", "tensor(float)", "tensor(int64)", "tensor(int64)")
    ranks = (2, 2, 2, 1)
    fits = (
        tuple(arg.name for arg in inputs) == INPUT_NAMES
        and tuple(arg.name for arg in outputs) == OUTPUT_NAMES
        and all((arg.type, len(arg.shape)) == (t, r) for arg, t, r in zip(inputs, types, ranks))
        and (outputs[0].type, len(outputs[0].shape), outputs[1].type, len(outputs[1].shape)) == ("tensor(float)", 4, "tensor(float)", 2)
        and all(isinstance(size, int) for size in (inputs[0].shape[1], outputs[0].shape[0], outputs[0].shape[3]))
    )
    if not fits:
        raise OnnxGraphError(
            f"this ONNX graph is not a biLM written by export_onnx ({described}); a biLM graph takes {INPUT_NAME} "
            f"int64 (n_new, max_characters) and gives {OUTPUT_NAME} float32 (n_layers, batch, n_tokens, width)"
        )
    return inputs[0], outputs[0]


def _reason(err: Exception) -> str:
    """ONNX Runtime's message in one line: its first two sentences, without its status prefix and
    the source location and function it names."""
    lines = str(err).strip().splitlines()
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", lines[0] if lines else type(err).__name__)
    text = re.sub(r"^\S+:\d+ .*?\) (?=[A-Z])", "", text)
    return " ".join(re.split(r"(?<=\.) ", text)[:2])
