"""`export_onnx`: a float32 biLM as one ONNX graph with dynamic batch size and length."""
import tempfile
import warnings
from pathlib import Path

import torch

from ..bilm.lexicon import Lexicon
from ..bilm.model import BiLM
from ..bilm.quantization import is_int8
from ..errors import SpacyElmoError
from ..paths import PathLike
from .graph import BiLMGraph
from .interface import (
    ACTIVE_ROWS_KEY,
    DEFAULT_OPSET,
    EMBEDDINGS_NAME,
    INPUT_NAMES,
    KNOWN_NAME,
    LEXICON_INPUT_NAMES,
    LEXICON_KEY,
    OPSETS,
    OUTPUT_NAME,
    OUTPUT_NAMES,
)


def export_onnx(bilm: BiLM, path: PathLike, *, opset: int = DEFAULT_OPSET, int8: bool = False) -> Path:
    """Write the stateless biLM as an ONNX model and check it; with `int8`, its int8 copy
    (`quantize_onnx`) instead.

    Inputs (format 2, see `interface`): "char_ids" int64 (n_new, max_characters), the character
    ids (`CharacterMapper.encode`) of the tokens to encode; "known" float32 (n_known, P), token
    embeddings computed before; "token_index" int64 (batch, n_tokens), each slot's row of
    [known; new]; "lengths" int64 (batch,). The graph reads each sentence between <S> and </S>.
    Outputs: "layers" float32 (n_layers, batch, n_tokens, 2P), the layers `BiLM.embed_batch`
    gives, zero at padding; "token_embeddings" float32 (n_new, P), to be passed as "known"
    later (`OnnxBiLM` caches them, so the character CNN runs once per token string). Stateless only: no LSTM state is carried across calls
    (`embed_batch(stateful=True)`, bilm-tf's and AllenNLP's replay, has no ONNX counterpart).
    A biLM with learned vocabularies (ELMoForManyLangs) takes "lexicon_ids" int64 (n_new,
    max_characters + 1) (`Lexicon.encode`: character ids, then the word id) in place of
    "char_ids"; its character and word embeddings are in the graph, its vocabularies in the
    graph's metadata ("spacy_elmo.lexicon", `LexiconMapper.to_json`), which `OnnxBiLM` reads.

    bilm (BiLM): a float32 biLM on the CPU.
    path (PathLike): the .onnx file to write (overwritten).
    opset (int): the ONNX opset, 13 to 20.
    int8 (bool): write the int8 copy of the float32 graph (ONNX Runtime's dynamic quantization).
    RETURNS (Path): the path written.
    """
    if is_int8(bilm):
        raise SpacyElmoError("this biLM is quantized to int8 in torch; export its float32 weights (int8 ONNX: quantize_onnx)")
    if bilm.dtype != torch.float32 or bilm.device.type != "cpu":
        raise SpacyElmoError(f"ONNX export takes a float32 biLM on the CPU, not {bilm.dtype} on {bilm.device}")
    if opset not in OPSETS:
        raise SpacyElmoError(f"opset {opset} is not supported; use {OPSETS.start} to {OPSETS.stop - 1}")
    path = Path(path)
    if int8:
        from .quantization import quantize_onnx

        with tempfile.TemporaryDirectory(prefix="spacy-elmo-") as folder:
            return quantize_onnx(export_onnx(bilm, Path(folder) / "float32.onnx", opset=opset), path)
    dim = bilm.output_dim // 2  # the token embedding's width, P
    lexicon = bilm.characters if isinstance(bilm.characters, Lexicon) else None
    input_names = INPUT_NAMES if lexicon is None else LEXICON_INPUT_NAMES
    example = (
        torch.from_numpy(bilm.characters.encode(["Export", "me"])),
        torch.zeros((1, dim), dtype=torch.float32),
        torch.tensor([[1, 2, 0], [0, 0, 0]], dtype=torch.int64),
        torch.tensor([3, 1], dtype=torch.int64),
    )
    with torch.no_grad(), warnings.catch_warnings():
        # torch 2.13 marks the TorchScript-based exporter and scripting deprecated; it is the one
        # that turns a scripted loop into an ONNX Loop over a dynamic number of steps.
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            BiLMGraph(bilm),  # traced in eval mode (the exporter's default)
            example,
            str(path),
            dynamo=False,
            opset_version=opset,
            input_names=list(input_names),
            output_names=list(OUTPUT_NAMES),
            dynamic_axes={
                input_names[0]: {0: "n_new"},
                KNOWN_NAME: {0: "n_known"},
                input_names[2]: {0: "batch", 1: "n_tokens"},
                input_names[3]: {0: "batch"},
                OUTPUT_NAME: {1: "batch", 2: "n_tokens"},
                EMBEDDINGS_NAME: {0: "n_new"},
            },
        )
    import onnx

    model = onnx.load(str(path))
    # The tracer leaves the output's fixed sizes unnamed; readers take them from its shape.
    dims = model.graph.output[0].type.tensor_type.shape.dim
    dims[0].dim_value, dims[3].dim_value = bilm.n_layers, bilm.output_dim
    model.graph.output[1].type.tensor_type.shape.dim[1].dim_value = dim
    model.graph.input[1].type.tensor_type.shape.dim[1].dim_value = dim
    model.metadata_props.add(key=ACTIVE_ROWS_KEY, value="1")
    if lexicon is not None:
        model.metadata_props.add(key=LEXICON_KEY, value=lexicon.mapper.to_json())
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path
