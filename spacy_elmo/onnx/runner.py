"""`OnnxBiLM`: run a biLM exported by `export_onnx` with ONNX Runtime, without torch."""
import ctypes
import os
import re
import threading
import weakref
from collections import OrderedDict
from typing import Any, Dict, List, Sequence, Union

import numpy as np
import onnxruntime

from ..batching import Sentences, check_sentences, in_length_batches
from ..characters import CharacterMapper, LexiconMapper
from ..errors import SpacyElmoError
from ..paths import PathLike
from ..runtime import DEFAULT_BATCH_SIZE, DEFAULT_CACHE_BYTES, DEFAULT_MAX_TOKENS
from .interface import ACTIVE_ROWS_KEY, INPUT_NAME, INPUT_NAMES, INT8_PRODUCER, LEXICON_INPUT_NAME, LEXICON_INPUT_NAMES, LEXICON_KEY, OUTPUT_NAME, OUTPUT_NAMES

# What ONNX Runtime raises for a model it cannot load (its own classes, not RuntimeError).
_STATE = onnxruntime.capi.onnxruntime_pybind11_state
LOAD_ERRORS = tuple(
    getattr(_STATE, name) for name in ("Fail", "InvalidArgument", "InvalidGraph", "InvalidProtobuf", "NoSuchFile", "NotImplemented", "RuntimeException")
)


class OnnxGraphError(SpacyElmoError):
    """An ONNX graph that ONNX Runtime cannot load, or that is not a biLM written by `export_onnx`."""


class OutdatedGraphError(OnnxGraphError):
    """A biLM graph without the metadata ACTIVE_ROWS_KEY, which every graph `export_onnx` writes
    carries: the biLM must be exported again."""


# Every OnnxBiLM of this process, so that a forked child can set their sessions aside (`_after_fork`).
_RUNNERS: "weakref.WeakSet[OnnxBiLM]" = weakref.WeakSet()


def _after_fork() -> None:
    """In a forked child: keep each inherited session alive for good and give its runner a fresh
    lock. A session's thread pool did not survive the fork, and destroying the session waits for
    those threads for ever (`pthread_cond_destroy`); a runner makes a new session at its next run."""
    for runner in list(_RUNNERS):
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(runner.session))  # never freed, even at exit
        runner._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class OnnxBiLM:
    """An exported biLM on ONNX Runtime's CPU provider, with the embedding API of `BiLM`
    (stateless only). Tokens map to UTF-8 byte ids (`CharacterMapper`), or for a biLM with learned
    vocabularies (ELMoForManyLangs) to ids in the vocabularies of the graph's metadata (`LexiconMapper`).

    model (Union[PathLike, bytes]): the .onnx file (float32 or quantized), or its bytes.
    threads (int): ONNX Runtime's intra-op threads; 0: its default (one per physical core).
    cache_bytes (int): the bound of the token cache: the embeddings of recently seen token
        strings (least recently used evicted first), so that the graph's character CNN runs only
        on tokens it has not seen; 0: no cache (every distinct token of a batch encoded).
    """

    def __init__(self, model: Union[PathLike, bytes], *, threads: int = 0, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self._source = model if isinstance(model, bytes) else str(model)
        self.session = _session(self._source, threads)
        self._pid = os.getpid()
        where = "this ONNX graph" if isinstance(model, bytes) else f"the ONNX graph {model}"  # for the errors
        model_input, output = _check_interface(self.session.get_inputs(), self.session.get_outputs(), where)
        metadata = self.session.get_modelmeta()
        if ACTIVE_ROWS_KEY not in metadata.custom_metadata_map:
            raise OutdatedGraphError(
                f"{where} lacks the metadata {ACTIVE_ROWS_KEY!r} that every biLM graph of this spacy-elmo carries; export "
                "the biLM again with `python -m spacy_elmo export-onnx MODEL OUT`, or for a pipeline switch its torch "
                "pipeline again with `python -m spacy_elmo set-runtime`"
            )
        self.characters = _token_mapper(self.session, model_input, where)
        # "int8" for a graph that ONNX Runtime's quantizer wrote, else "float32".
        self.compute_dtype = "int8" if metadata.producer_name == INT8_PRODUCER else "float32"
        self._input_name: str = model_input.name
        self.n_layers: int = output.shape[0]
        self.output_dim: int = output.shape[3]
        self.token_dim = self.output_dim // 2
        self.cache_size = cache_bytes // (4 * self.token_dim)
        self._cache: "OrderedDict[str, np.ndarray]" = OrderedDict()
        self._lock = threading.Lock()
        _RUNNERS.add(self)

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
        """Embed one batch in one run of the graph (its LSTM loops step only the rows whose
        sentences they have not passed, so a batch of any lengths costs its tokens, not its padding).

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
            self._input_name: self.characters.encode(new),
            INPUT_NAMES[1]: np.stack(vectors) if vectors else np.zeros((0, self.token_dim), dtype=np.float32),
            INPUT_NAMES[2]: token_index,
            INPUT_NAMES[3]: np.array([len(sentence) for sentence in sentences], dtype=np.int64),
        }
        if self._pid != os.getpid():  # forked (`nlp.pipe(n_process=N)`): one thread per worker process
            self.session, self._pid = _session(self._source, 1), os.getpid()
        layers, embeddings = self.session.run(None, inputs)
        if self.cache_size > 0:
            with self._lock:
                for token, vector in zip(new, embeddings):
                    self._cache[token] = vector.copy()
                    self._cache.move_to_end(token)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return [layers[:, row, : len(sentence)].copy() for row, sentence in enumerate(sentences)]


def _session(source: Union[str, bytes], threads: int) -> onnxruntime.InferenceSession:
    """An ONNX Runtime session of the graph at `source` (a path or the graph's bytes) on the CPU."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    try:
        return onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    except LOAD_ERRORS as err:
        raise OnnxGraphError(f"ONNX Runtime {onnxruntime.__version__} cannot load this graph: {_reason(err)}") from None


def _check_interface(inputs: Sequence[Any], outputs: Sequence[Any], where: str) -> Any:
    """The character input (byte ids or a learned vocabulary's) and layers output of a biLM graph
    (`export_onnx`'s interface), else an OnnxGraphError that starts with `where` (the graph)."""
    described = "; ".join(f"{arg.name} {arg.type} {arg.shape}" for arg in [*inputs, *outputs])
    types = ("tensor(int64)", "tensor(float)", "tensor(int64)", "tensor(int64)")
    ranks = (2, 2, 2, 1)
    fits = (
        tuple(arg.name for arg in inputs) in (INPUT_NAMES, LEXICON_INPUT_NAMES)
        and tuple(arg.name for arg in outputs) == OUTPUT_NAMES
        and all((arg.type, len(arg.shape)) == (t, r) for arg, t, r in zip(inputs, types, ranks))
        and (outputs[0].type, len(outputs[0].shape), outputs[1].type, len(outputs[1].shape)) == ("tensor(float)", 4, "tensor(float)", 2)
        and all(isinstance(size, int) for size in (inputs[0].shape[1], outputs[0].shape[0], outputs[0].shape[3]))
    )
    if not fits:
        raise OnnxGraphError(
            f"{where} is not a biLM written by export_onnx ({described}); a biLM graph takes {INPUT_NAME} "
            f"int64 (n_new, max_characters) or {LEXICON_INPUT_NAME} int64 (n_new, max_characters + 1) and gives {OUTPUT_NAME} float32 "
            "(n_layers, batch, n_tokens, width); export the biLM with `python -m spacy_elmo export-onnx MODEL OUT`"
        )
    return inputs[0], outputs[0]


def _token_mapper(session: onnxruntime.InferenceSession, model_input: Any, where: str) -> Union[CharacterMapper, LexiconMapper]:
    """How the graph's character input maps tokens: UTF-8 bytes, or the learned vocabularies
    (ELMoForManyLangs) that its metadata holds; errors start with `where` (the graph)."""
    if model_input.name == INPUT_NAME:
        return CharacterMapper(model_input.shape[1])
    text = session.get_modelmeta().custom_metadata_map.get(LEXICON_KEY)
    if text is None:
        raise OnnxGraphError(
            f"{where} takes {LEXICON_INPUT_NAME} (a learned character vocabulary, ELMoForManyLangs), but its "
            f"metadata lacks {LEXICON_KEY!r}, the vocabularies; export the biLM again with export_onnx"
        )
    try:
        return LexiconMapper.from_json(text, model_input.shape[1] - 1)
    except ValueError as err:
        raise OnnxGraphError(f"{where}: its metadata {LEXICON_KEY!r} is not the vocabularies export_onnx writes: {err}") from None


def _reason(err: Exception) -> str:
    """ONNX Runtime's message in one line: its first two sentences, without its status prefix and
    the source location and function it names."""
    lines = str(err).strip().splitlines()
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", lines[0] if lines else type(err).__name__)
    text = re.sub(r"^\S+:\d+ .*?\) (?=[A-Z])", "", text)
    return " ".join(re.split(r"(?<=\.) ", text)[:2])
