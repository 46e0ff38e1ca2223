"""`OnnxBiLM`: run a biLM exported by `export_onnx` with ONNX Runtime, without torch."""
import re
from typing import Any, List, Optional, Sequence, Union

import numpy as np
import onnxruntime

from ..batching import Sentences, check_sentences, length_batches
from ..characters import CharacterMapper
from ..errors import SpacyElmoError
from ..paths import PathLike
from ..runtime import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS
from .interface import INPUT_NAME, OUTPUT_NAME

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
    """

    def __init__(self, model: Union[PathLike, bytes], *, threads: int = 0) -> None:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        source = model if isinstance(model, bytes) else str(model)
        try:
            self.session = onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        except LOAD_ERRORS as err:
            raise OnnxGraphError(f"ONNX Runtime {onnxruntime.__version__} cannot load this graph: {_reason(err)}") from None
        model_input, output = _check_interface(self.session.get_inputs(), self.session.get_outputs())
        self.input_name = model_input.name
        self.characters = CharacterMapper(model_input.shape[2])
        self.n_layers: int = output.shape[0]
        self.output_dim: int = output.shape[3]

    def embed_sentences(
        self,
        sentences: Sentences,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> List[np.ndarray]:
        """Embed tokenized sentences in length-sorted batches, as `BiLM.embed_sentences`.

        RETURNS (List[np.ndarray]): per sentence a float32 array (n_layers, n_tokens, output_dim).
        """
        check_sentences(sentences)
        results: List[Optional[np.ndarray]] = [None] * len(sentences)
        for batch in length_batches([len(s) for s in sentences], batch_size, max_tokens):
            for index, array in zip(batch, self.embed_batch([sentences[i] for i in batch])):
                results[index] = array
        return results  # type: ignore[return-value]

    def embed_batch(self, sentences: Sentences) -> List[np.ndarray]:
        """Embed one batch in one run of the graph.

        RETURNS (List[np.ndarray]): per sentence a float32 array (n_layers, n_tokens, output_dim).
        """
        check_sentences(sentences)
        char_ids = self.characters.encode_batch(sentences)
        if char_ids.shape[1] == 0:  # no tokens at all: the graph's loops need a step
            return [np.zeros((self.n_layers, 0, self.output_dim), dtype=np.float32) for _ in sentences]
        (layers,) = self.session.run(None, {self.input_name: char_ids})
        return [layers[:, row, : len(sentence)].copy() for row, sentence in enumerate(sentences)]


def _check_interface(inputs: Sequence[Any], outputs: Sequence[Any]) -> Any:
    """The input and output of a biLM graph (`export_onnx`'s interface), else an OnnxGraphError."""
    fits = (
        len(inputs) == 1
        and len(outputs) == 1
        and (inputs[0].name, inputs[0].type, len(inputs[0].shape)) == (INPUT_NAME, "tensor(int64)", 3)
        and (outputs[0].name, outputs[0].type, len(outputs[0].shape)) == (OUTPUT_NAME, "tensor(float)", 4)
        and all(isinstance(size, int) for size in (inputs[0].shape[2], outputs[0].shape[0], outputs[0].shape[3]))
    )
    if not fits:
        described = "; ".join(f"{arg.name} {arg.type} {arg.shape}" for arg in [*inputs, *outputs])
        raise OnnxGraphError(
            f"this ONNX graph is not a biLM written by export_onnx ({described}); a biLM graph takes {INPUT_NAME} "
            f"int64 (batch, n_tokens, max_characters) and gives {OUTPUT_NAME} float32 (n_layers, batch, n_tokens, width)"
        )
    return inputs[0], outputs[0]


def _reason(err: Exception) -> str:
    """ONNX Runtime's message in one line: its first two sentences, without its status prefix and
    the source location and function it names."""
    lines = str(err).strip().splitlines()
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", lines[0] if lines else type(err).__name__)
    text = re.sub(r"^\S+:\d+ .*?\) (?=[A-Z])", "", text)
    return " ".join(re.split(r"(?<=\.) ", text)[:2])
