"""`OnnxBiLM`: run a biLM exported by `export_onnx` with ONNX Runtime, without torch."""
from typing import List, Optional

import numpy as np
import onnxruntime

from ..batching import Sentences, check_sentences, length_batches
from ..characters import CharacterMapper
from ..paths import PathLike
from ..runtime import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS


class OnnxBiLM:
    """An exported biLM on ONNX Runtime's CPU provider, with the embedding API of `BiLM`
    (stateless only).

    path (PathLike): the .onnx file (float32 or quantized).
    threads (int): ONNX Runtime's intra-op threads; 0: its default (one per physical core).
    """

    def __init__(self, path: PathLike, *, threads: int = 0) -> None:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        (model_input,), (output,) = self.session.get_inputs(), self.session.get_outputs()
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
