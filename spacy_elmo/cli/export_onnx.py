"""`python -m spacy_elmo export-onnx MODEL OUT`: a biLM as one ONNX graph for ONNX Runtime."""
from pathlib import Path
from typing import Optional

import typer

from ..dependencies import require
from ..errors import SpacyElmoError
from ..onnx.interface import CHECK_SENTENCE, DEFAULT_OPSET, OPSETS
from ..paths import staged_output
from .app import app


@app.command("export-onnx")
def export_onnx_command(
    model: str = typer.Argument(..., help="A model: bundled or published name, native folder, bilm-tf .hdf5 (with --options), NLPL .zip or folder"),
    output: Path = typer.Argument(..., help="The .onnx file to write"),
    options: Optional[Path] = typer.Option(None, help="options.json of a bilm-tf .hdf5 given as MODEL"),
    int8: bool = typer.Option(False, "--int8", help="Write int8 weights (ONNX Runtime's dynamic quantization of the convolutions and products)"),
    opset: int = typer.Option(DEFAULT_OPSET, help=f"ONNX opset, {OPSETS.start} to {OPSETS.stop - 1}"),
    force: bool = typer.Option(False, "--force", help="Overwrite OUT if it exists"),
) -> None:
    """Export a biLM's stateless forward (character ids in, every layer out, any batch size and
    length) as an ONNX model, and compare ONNX Runtime's output with torch's on a test sentence.
    Needs the `onnx` extra (onnx, onnxruntime)."""
    try:
        if output.exists() and not force:
            raise SpacyElmoError(f"{output} exists; pass --force to overwrite it")
        for dependency in ("onnx", "onnxruntime"):
            require(dependency, "export-onnx")
        from ..bilm import load_bilm
        from ..onnx.export import export_onnx
        from ..onnx.quantization import layer_cosines
        from ..onnx.runner import OnnxBiLM

        bilm = load_bilm(model, options=options)
        with staged_output(output) as staging:  # OUT appears only exported and run on ONNX Runtime
            export_onnx(bilm, staging, opset=opset, int8=int8)
            expected = bilm.embed_sentences([CHECK_SENTENCE])
            got = OnnxBiLM(staging, threads=1).embed_sentences([CHECK_SENTENCE])
    except (SpacyElmoError, OSError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1)
    check = float(abs(expected[0] - got[0]).max())
    kind = "int8" if int8 else "float32"
    typer.echo(f"{model} -> {output} ({kind}, opset {opset}; {bilm.n_layers} layers of {bilm.output_dim})")
    typer.echo(f"max abs difference of ONNX Runtime to torch on a test sentence: {check:.2e}")
    if int8:
        cosines = ", ".join(f"{c:.4f}" for c in layer_cosines(expected, got))
        typer.echo(f"mean cosine of each layer to torch float32: {cosines}")

