"""`python -m spacy_elmo set-runtime PIPELINE OUTPUT --runtime R --compute-dtype D`: a copy of a
saved pipeline whose elmo component runs on another runtime or compute dtype."""
from pathlib import Path

import typer

from ..errors import SpacyElmoError
from ..runtime import DEFAULT_COMPUTE_DTYPE
from .app import app


@app.command("set-runtime")
def set_runtime_command(
    pipeline: Path = typer.Argument(..., help="A saved spaCy pipeline with an elmo component"),
    output: Path = typer.Argument(..., help="Where to write the copy"),
    runtime: str = typer.Option(..., "--runtime", help='"torch" or "onnxruntime"'),
    compute_dtype: str = typer.Option(DEFAULT_COMPUTE_DTYPE, "--compute-dtype", help='"float32" or "int8" ("bfloat16": torch only)'),
    force: bool = typer.Option(False, "--force", help="Replace the pipeline at OUTPUT if there is one"),
) -> None:
    """Write a copy of PIPELINE whose elmo component runs on RUNTIME in COMPUTE_DTYPE (torch ->
    ONNX Runtime exports the pipeline's biLM; back to torch reads it from the model block's
    bilm), every other component unchanged. A v1 model block becomes v2. Needs the `onnx` extra
    for ONNX Runtime."""
    from ..pipeline.runtime_switch import set_runtime

    try:
        result = set_runtime(pipeline, output, runtime, compute_dtype, force=force)
    except (SpacyElmoError, OSError, ValueError) as err:
        typer.echo(f"error: {' '.join(str(err).split())}", err=True)
        raise typer.Exit(1)
    for upgraded in result.upgraded:
        typer.echo(f"upgraded {upgraded}")
    for component in result.components:
        typer.echo(f"{pipeline} -> {output}: elmo component '{component.name}': {component.before} -> {component.after}")
        for note in component.notes:
            typer.echo(f"  {note}")
        cosines = ", ".join(f"{c:.4f}" for c in component.layer_cosines)
        typer.echo(
            f"  doc._.elmo on a test text, to {component.reference}: max abs difference "
            f"{component.max_abs_difference:.2e}; mean cosine of each layer {cosines}"
        )
