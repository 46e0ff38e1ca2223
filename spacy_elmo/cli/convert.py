"""`python -m spacy_elmo convert SRC OUT`: any loadable biLM as a native folder (safetensors)."""
from pathlib import Path
from typing import Optional

import typer

from ..errors import SpacyElmoError
from ..paths import staged_output
from .app import app
from .removed_options import RemovedOptionsCommand

CHECK_SENTENCE = ["The", "model", "was", "converted", "."]


@app.command("convert", cls=RemovedOptionsCommand)
def convert_command(
    source: str = typer.Argument(
        ..., help="A model: ELMoForManyLangs folder, bilm-tf .hdf5 (with --options), NLPL .zip or folder, published name"
    ),
    output: Path = typer.Argument(..., help="New native model folder (config.json, model.safetensors, pretrain.json)"),
    options: Optional[Path] = typer.Option(None, help="options.json of a bilm-tf .hdf5 given as SOURCE"),
    lang: Optional[str] = typer.Option(None, help="Language of the training text, for the model card (default: what SOURCE says)"),
    storage_dtype: Optional[str] = typer.Option(
        None, "--storage-dtype", help="Storage type: float16 or bfloat16 (default: float32)"
    ),
) -> None:
    """Write a model as a native folder, so that it loads without pickles, TensorFlow or its archive;
    its model card (language, corpus, licence) goes into pretrain.json."""
    from ..bilm import load_bilm, save_bilm
    from ..bilm.model_info import read_model_info, write_model_info

    try:
        if output.exists() and any(output.iterdir()):
            raise SpacyElmoError(f"{output} exists and is not empty; name a new folder")
        bilm = load_bilm(source, options=options)
        info = read_model_info(source)
        info.setdefault("name", output.name)
        if lang:
            info["lang"] = lang
        with staged_output(output) as staging:  # OUT appears only written and reloaded
            save_bilm(bilm, staging, storage_dtype)
            write_model_info(staging, {"converted_from": source, **info})
            reloaded = load_bilm(staging).embed_sentences([CHECK_SENTENCE])
            check = max(float(abs(a - b).max()) for a, b in zip(bilm.embed_sentences([CHECK_SENTENCE]), reloaded))
    except (SpacyElmoError, OSError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1)
    card = ", ".join(f"{key} {info[key]}" for key in ("lang", "corpus", "license") if key in info) or "no model card"
    typer.echo(f"{source} -> {output} ({bilm.n_layers} layers of {bilm.output_dim}; {card})")
    typer.echo(f"max abs difference of the reloaded folder on a test sentence: {check:.2e}")
