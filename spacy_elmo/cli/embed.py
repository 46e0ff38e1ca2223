"""`python -m spacy_elmo embed`: precompute the biLM layers of every line of a corpus.

The command parses its options into one `EmbedSettings` and hands it to an engine:

- "local" (default): one process, one text file, AllenNLP's hdf5 layout (`spacy_elmo.embed.local`);
- "ray": text, JSONL or Parquet files (local paths, globs, or any path Ray reads) through a
  pool of Ray actors into a Parquet folder (`spacy_elmo.ray_data`, the `ray` extra).
"""
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import typer

from ..errors import SpacyElmoError
from ..layers.elmo_model import ElmoModelSettings
from ..embed.settings import EmbedSettings
from .app import app
from .removed_options import RemovedOptionsCommand

DEFAULTS = ElmoModelSettings()
EMBED_DEFAULTS = EmbedSettings()
ENGINES = ("local", "ray")
FILE_FORMATS = {"local": "hdf5", "ray": "parquet"}


@app.command("embed", cls=RemovedOptionsCommand)
def embed_command(
    inputs: List[str] = typer.Argument(..., help="UTF-8 text, a sentence or document a line; --engine ray: also globs, .jsonl, .parquet"),
    output: str = typer.Option(..., "--output", "-o", help="hdf5 file (local engine) or a new folder of Parquet files (ray)"),
    model: Optional[str] = typer.Option(None, help="Bundled or published model name, native model folder, or weights .hdf5 (default: bundled)"),
    options: Optional[str] = typer.Option(None, help="options.json of a weights .hdf5"),
    tokenize: str = typer.Option(EMBED_DEFAULTS.tokenize, help="'spacy' (the tokenizer of --lang, as the component sees text) or 'whitespace' (as the original tools)"),
    lang: Optional[str] = typer.Option(None, help="spaCy language for --tokenize spacy and --sentences (default: the model's, else en)"),
    sentences: bool = typer.Option(False, "--sentences", help="Read each line sentence by sentence (spaCy sentencizer)"),
    batch_size: int = typer.Option(DEFAULTS.batch_size, help="Most sequences per biLM forward pass"),
    max_tokens: int = typer.Option(DEFAULTS.max_tokens, help="Most padded token slots per forward pass"),
    device: str = typer.Option(DEFAULTS.device, help="auto, cpu, cuda or cuda:N"),
    compute_dtype: str = typer.Option(
        DEFAULTS.compute_dtype, "--compute-dtype", help="float32, bfloat16 or int8 (CPU only) computation"
    ),
    threads: Optional[int] = typer.Option(None, help="torch threads (local engine; default: torch's, at most the CPUs this process may use); ray workers use --cpus-per-worker"),
    overwrite: bool = typer.Option(False, "--overwrite", help="local: replace an existing hdf5 file"),
    engine: str = typer.Option("local", help="local (one process, hdf5) or ray (Ray Data, Parquet)"),
    file_format: Optional[str] = typer.Option(None, "--format", help="hdf5 (local engine) or parquet (ray engine)"),
    address: Optional[str] = typer.Option(None, help="ray: the cluster, 'auto' or ray://HOST:PORT (default: a local Ray for this run)"),
    workers: int = typer.Option(1, help="ray: actors, each loading the biLM once"),
    cpus_per_worker: float = typer.Option(1, help="ray: CPUs (and torch threads) per worker"),
    gpus_per_worker: float = typer.Option(0, help="ray: GPUs per worker (device cuda)"),
    text_column: str = typer.Option("text", help="ray: the text field of JSONL and column of Parquet inputs"),
    block_rows: Optional[int] = typer.Option(None, help="ray: rows per block, a worker's unit of work and of the files written (default 256)"),
    layer: str = typer.Option(str(EMBED_DEFAULTS.layer), help="all, top, average, or a layer index (hdf5: one layer is (n_tokens, width), as AllenNLP's --top)"),
    storage_dtype: str = typer.Option(
        EMBED_DEFAULTS.storage_dtype, "--storage-dtype", help="ray: float32 or float16 vectors"
    ),
) -> None:
    """Embed every line of INPUT... with the biLM's layers."""
    try:
        check_engine(engine, file_format, inputs, threads, overwrite, storage_dtype)
        ray_options = dict(address=address, workers=workers, cpus_per_worker=cpus_per_worker, gpus_per_worker=gpus_per_worker,
                           text_column=text_column, **({"block_rows": block_rows} if block_rows else {}))  # fmt: skip
        if engine == "local":
            check_no_ray_options(ray_options)
        from ..bilm.loading import check_options

        check_options(model, options)
        model_settings = ElmoModelSettings(bilm=model, options=options, batch_size=batch_size, max_tokens=max_tokens,
                                           device=device, compute_dtype=compute_dtype)  # fmt: skip
        settings = EmbedSettings(model=model_settings, tokenize=tokenize, lang=lang, sentences=sentences,
                                 layer=int(layer) if layer.isdigit() else layer, storage_dtype=storage_dtype)  # fmt: skip
        if engine == "local":
            from ..embed.local import embed_file

            summary = embed_file(Path(inputs[0]), Path(output), settings, threads=threads, overwrite=overwrite, progress=True)
        else:
            summary = embed_with_ray(inputs, output, settings, ray_options)
    except (SpacyElmoError, OSError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1)
    except KeyboardInterrupt:
        typer.echo(f"interrupted: nothing written to {output}", err=True)
        raise typer.Exit(130)
    for source, line, problem in summary["problems"][:20]:
        typer.echo(f"{source}:{line + 1}: {problem}; kept as a row without tokens", err=True)
    rate = summary["rows"] / max(summary["seconds"], 1e-9)
    typer.echo(
        f"embedded {summary['rows']:,} rows ({summary['tokens']:,} tokens) in {summary['seconds']:.1f} s, {rate:,.1f} rows/s, "
        f"{len(summary['problems']):,} without text; output: {output}"
    )


def check_engine(
    engine: str, file_format: Optional[str], inputs: Sequence[str], threads: Optional[int], overwrite: bool, storage_dtype: str
) -> None:
    """Refuse combinations that the engine cannot do."""
    if engine not in ENGINES:
        raise SpacyElmoError(f"unknown --engine {engine!r}; use one of {', '.join(ENGINES)}")
    if file_format not in (None, FILE_FORMATS[engine]):
        raise SpacyElmoError(f"--engine {engine} writes {FILE_FORMATS[engine]}, not {file_format!r}")
    if engine == "local" and len(inputs) != 1:
        raise SpacyElmoError(f"the local engine embeds one file into one hdf5 file, got {len(inputs)} inputs; use --engine ray for several")
    if engine == "ray" and threads is not None:
        raise SpacyElmoError("--threads is for the local engine; ray workers use --cpus-per-worker torch threads each")
    if engine == "ray" and overwrite:
        raise SpacyElmoError("--overwrite is for the local engine; the ray engine writes a new folder")
    if engine == "local" and storage_dtype != "float32":
        raise SpacyElmoError(f"--storage-dtype {storage_dtype} is for the ray engine; AllenNLP's hdf5 layout is float32")


RAY_DEFAULTS = {"address": None, "workers": 1, "cpus_per_worker": 1, "gpus_per_worker": 0, "text_column": "text"}


def check_no_ray_options(ray_options: Dict[str, Any]) -> None:
    """Refuse options of the ray engine given to the local one (they would be ignored)."""
    given = [key for key, value in ray_options.items() if RAY_DEFAULTS.get(key, None) != value]
    if given:
        flags = ", ".join("--" + key.replace("_", "-") for key in given)
        raise SpacyElmoError(f"{flags}: options of --engine ray; the local engine does not use them")


def embed_with_ray(inputs: List[str], output: str, settings: EmbedSettings, ray_options: Dict[str, Any]) -> Dict[str, Any]:
    """The ray engine, with its import error said plainly."""
    try:
        from ..ray_data import embed_files
    except ImportError as err:
        raise SpacyElmoError(f"--engine ray needs Ray Data: pip install 'spacy-elmo[ray]' ({err})") from None
    return embed_files(inputs, output, settings, **ray_options)
