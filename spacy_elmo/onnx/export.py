"""`export_onnx`: a float32 biLM as one ONNX graph with dynamic batch size and length."""
import tempfile
import warnings
from pathlib import Path

import torch

from ..bilm.errors import ModelFormatError
from ..bilm.lexicon import Lexicon
from ..bilm.model import BiLM
from ..bilm.quantization import is_int8
from ..errors import SpacyElmoError
from ..paths import PathLike
from .graph import BiLMGraph
from .interface import DEFAULT_OPSET, INPUT_NAME, OPSETS, OUTPUT_NAME


def export_onnx(bilm: BiLM, path: PathLike, *, opset: int = DEFAULT_OPSET, int8: bool = False) -> Path:
    """Write the stateless biLM as an ONNX model and check it; with `int8`, its int8 copy
    (`quantize_onnx`) instead.

    Input "char_ids": int64 (batch, n_tokens, max_characters), the ids of `BiLM.char_id_layers`
    (padded token slots all zero, after each sentence's tokens; the graph adds <S> and </S>).
    Output "layers": float32 (n_layers, batch, n_tokens, 2P), the layers `BiLM.embed_batch`
    gives, zero at padding. Stateless only: no LSTM state is carried across calls
    (`embed_batch(stateful=True)`, bilm-tf's and AllenNLP's replay, has no ONNX counterpart).

    bilm (BiLM): a float32 biLM on the CPU with byte-level characters.
    path (PathLike): the .onnx file to write (overwritten).
    opset (int): the ONNX opset, 13 to 20.
    int8 (bool): write the int8 copy of the float32 graph (ONNX Runtime's dynamic quantization).
    RETURNS (Path): the path written.
    """
    if is_int8(bilm):
        raise SpacyElmoError("this biLM is quantized to int8 in torch; export its float32 weights (int8 ONNX: quantize_onnx)")
    if bilm.dtype != torch.float32 or bilm.device.type != "cpu":
        raise SpacyElmoError(f"ONNX export takes a float32 biLM on the CPU, not {bilm.dtype} on {bilm.device}")
    if isinstance(bilm.characters, Lexicon):
        raise ModelFormatError("this biLM has a learned character vocabulary (ELMoForManyLangs); ONNX export takes byte ids")
    if opset not in OPSETS:
        raise SpacyElmoError(f"opset {opset} is not supported; use {OPSETS.start} to {OPSETS.stop - 1}")
    path = Path(path)
    if int8:
        from .quantization import quantize_onnx

        with tempfile.TemporaryDirectory(prefix="spacy-elmo-") as folder:
            return quantize_onnx(export_onnx(bilm, Path(folder) / "float32.onnx", opset=opset), path)
    example = torch.from_numpy(bilm.characters.encode(["Export", "me", "."])).unsqueeze(0)
    with torch.no_grad(), warnings.catch_warnings():
        # torch 2.13 marks the TorchScript-based exporter and scripting deprecated; it is the one
        # that turns a scripted loop into an ONNX Loop over a dynamic number of steps.
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            BiLMGraph(bilm),  # traced in eval mode (the exporter's default)
            (example,),
            str(path),
            dynamo=False,
            opset_version=opset,
            input_names=[INPUT_NAME],
            output_names=[OUTPUT_NAME],
            dynamic_axes={INPUT_NAME: {0: "batch", 1: "n_tokens"}, OUTPUT_NAME: {1: "batch", 2: "n_tokens"}},
        )
    import onnx

    model = onnx.load(str(path))
    # The tracer leaves the output's fixed sizes unnamed; readers take them from its shape.
    dims = model.graph.output[0].type.tensor_type.shape.dim
    dims[0].dim_value, dims[3].dim_value = bilm.n_layers, bilm.output_dim
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path
