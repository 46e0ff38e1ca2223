"""`python -m spacy_elmo embed`: precompute the biLM layers of every line of a corpus.

Two engines run the same `LineEmbedder`:

- "local" (default): one process, one text file, AllenNLP's hdf5 layout (`embedding_file.py`);
- "ray": text, JSONL or Parquet files (local paths, globs, or any path Ray reads) through a
  pool of Ray actors into a Parquet folder (`spacy_elmo.distributed`, the `ray` extra).
"""
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import typer

from ..errors import SpacyElmoError
from ..layers.elmo_model import ElmoModelSettings
from ..line_embedder import LineEmbedder
from ..runtime import set_threads
from .app import app

DEFAULTS = ElmoModelSettings()
ENGINES = ("local", "ray")
FORMATS = {"local": "hdf5", "ray": "parquet"}


@app.command("embed")
def embed_command(
    inputs: List[str] = typer.Argument(..., help="UTF-8 text, a sentence or document a line; --engine ray: also globs, .jsonl, .parquet"),
    output: str = typer.Option(..., "--output", "-o", help="hdf5 file (local engine) or a new folder of Parquet files (ray)"),
    model: Optional[str] = typer.Option(None, help="Bundled or published model name, native model folder, or weights .hdf5 (default: bundled)"),
    options: Optional[str] = typer.Option(None, help="options.json of a weights .hdf5"),
    tokenize: str = typer.Option("spacy", help="'spacy' (the tokenizer of --lang, as the component sees text) or 'whitespace' (as the original tools)"),
    lang: Optional[str] = typer.Option(None, help="spaCy language for --tokenize spacy and --sentences (default: the model's, else en)"),
    sentences: bool = typer.Option(False, "--sentences", help="Read each line sentence by sentence (spaCy sentencizer)"),
    batch_size: int = typer.Option(DEFAULTS.batch_size, help="Most sequences per biLM forward pass"),
    max_tokens: int = typer.Option(DEFAULTS.max_tokens, help="Most padded token slots per forward pass"),
    device: str = typer.Option(DEFAULTS.device, help="auto, cpu, cuda or cuda:N"),
    dtype: str = typer.Option(DEFAULTS.dtype, help="float32, bfloat16 or int8 (CPU only) computation"),
    threads: Optional[int] = typer.Option(None, help="torch threads (local engine; default: torch's, at most the CPUs this process may use); ray workers use --cpus-per-worker"),
    engine: str = typer.Option("local", help="local (one process, hdf5) or ray (Ray Data, Parquet)"),
    output_format: Optional[str] = typer.Option(None, "--format", help="hdf5 (local engine) or parquet (ray engine)"),
    address: Optional[str] = typer.Option(None, help="ray: the cluster, 'auto' or ray://HOST:PORT (default: a local Ray for this run)"),
    workers: int = typer.Option(1, help="ray: actors, each loading the biLM once"),
    cpus_per_worker: float = typer.Option(1, help="ray: CPUs (and torch threads) per worker"),
    gpus_per_worker: float = typer.Option(0, help="ray: GPUs per worker (device cuda)"),
    text_column: str = typer.Option("text", help="ray: the text field of JSONL and column of Parquet inputs"),
    block_rows: Optional[int] = typer.Option(None, help="ray: rows per block, a worker's unit of work and of the files written (default 256)"),
    layers: str = typer.Option("all", help="ray: all, top, average, or a layer index"),
    storage: str = typer.Option("float32", help="ray: float32 or float16 vectors"),
) -> None:
    """Embed every line of INPUT... with the biLM's layers."""
    settings = dict(model=model, options=options, tokenize=tokenize, lang=lang, sentences=sentences, batch_size=batch_size,
                    max_tokens=max_tokens, device=device, dtype=dtype)  # fmt: skip
    try:
        check_engine(engine, output_format, inputs, threads)
        if engine == "local":
            start = time.perf_counter()
            n_lines, n_tokens = embed_file(Path(inputs[0]), Path(output), threads=threads, progress=True, **settings)
            summary = {"rows": n_lines, "tokens": n_tokens, "seconds": time.perf_counter() - start, "problems": []}
        else:
            ray_options = dict(address=address, workers=workers, cpus_per_worker=cpus_per_worker, gpus_per_worker=gpus_per_worker,
                               text_column=text_column, **({"block_rows": block_rows} if block_rows else {}))  # fmt: skip
            summary = embed_with_ray(inputs, output, layers, storage, settings, ray_options)
    except (SpacyElmoError, OSError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1)
    for source, line, problem in summary["problems"][:20]:
        typer.echo(f"{source}:{line + 1}: {problem}; kept as a row without tokens", err=True)
    rate = summary["rows"] / max(summary["seconds"], 1e-9)
    typer.echo(
        f"embedded {summary['rows']:,} rows ({summary['tokens']:,} tokens) in {summary['seconds']:.1f} s, {rate:,.1f} rows/s, "
        f"{len(summary['problems']):,} without text; output: {output}"
    )


def check_engine(engine: str, output_format: Optional[str], inputs: Sequence[str], threads: Optional[int]) -> None:
    """Refuse combinations that the engine cannot do."""
    if engine not in ENGINES:
        raise SpacyElmoError(f"unknown --engine {engine!r}; use one of {', '.join(ENGINES)}")
    if output_format not in (None, FORMATS[engine]):
        raise SpacyElmoError(f"--engine {engine} writes {FORMATS[engine]}, not {output_format!r}")
    if engine == "local" and len(inputs) != 1:
        raise SpacyElmoError(f"the local engine embeds one file into one hdf5 file, got {len(inputs)} inputs; use --engine ray for several")
    if engine == "ray" and threads is not None:
        raise SpacyElmoError("--threads is for the local engine; ray workers use --cpus-per-worker torch threads each")


def embed_with_ray(inputs: List[str], output: str, layers: str, storage: str, settings: Dict[str, Any], ray_options: Dict[str, Any]) -> Dict[str, Any]:
    """The ray engine, with its import error said plainly."""
    try:
        from ..distributed import embed_files
    except ImportError as err:
        raise SpacyElmoError(f"--engine ray needs Ray Data: pip install 'spacy-elmo[ray]' ({err})") from None
    options = {**settings, "model_dtype": settings["dtype"], "dtype": storage, "layers": int(layers) if layers.isdigit() else layers}
    return embed_files(inputs, output, **ray_options, **options)


def embed_file(
    input_path: Path,
    output: Path,
    *,
    model: Optional[str] = None,
    options: Optional[str] = None,
    tokenize: str = "spacy",
    lang: Optional[str] = None,
    sentences: bool = False,
    batch_size: int = DEFAULTS.batch_size,
    max_tokens: int = DEFAULTS.max_tokens,
    device: str = DEFAULTS.device,
    dtype: str = DEFAULTS.dtype,
    threads: Optional[int] = None,
    progress: bool = False,
) -> Tuple[int, int]:
    """Embed each line of `input_path` into the hdf5 file `output` in AllenNLP's layout (lines
    stripped, blank lines refused); returns the number of lines and of tokens."""
    from ..embedding_file import check_lines, write_embedding_file

    if not input_path.is_file():
        raise SpacyElmoError(f"input file not found: {input_path}")
    if not output.parent.is_dir():
        raise SpacyElmoError(f"the folder of the output file does not exist: {output.parent}")
    lines = read_lines(input_path)
    if not lines:
        raise SpacyElmoError(f"{input_path} is empty: nothing to embed")
    check_lines(lines, input_path)
    set_threads(threads)
    settings = ElmoModelSettings(bilm=model, options=options, batch_size=batch_size, max_tokens=max_tokens, device=device, dtype=dtype)
    embedder = LineEmbedder(settings, tokenize, lang, sentences)
    tokens = [0]
    items = _counted(embedded_lines(embedder, lines, batch_size), tokens)
    if progress:
        from tqdm import tqdm

        items = tqdm(items, total=len(lines), unit="line")
    return write_embedding_file(output, items), tokens[0]


def embedded_lines(embedder: LineEmbedder, lines: Sequence[str], chunk: int) -> Iterator[Tuple[str, np.ndarray]]:
    """(line, layers) for each line, `chunk` lines at a time."""
    for start in range(0, len(lines), chunk):
        part = lines[start : start + chunk]
        for line, (_, layers) in zip(part, embedder(part)):
            yield line, layers


def read_lines(path: Path) -> List[str]:
    """The stripped lines of a UTF-8 text file; a line that is not UTF-8 is an error naming file:line."""
    lines = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                lines.append(raw.decode("utf8").strip())
            except UnicodeDecodeError as err:
                raise SpacyElmoError(
                    f"{path}:{number}: not UTF-8 text ({err.reason} at byte {err.start}); embed reads UTF-8 text files"
                ) from None
    return lines


def _counted(items: Iterator[Tuple[str, np.ndarray]], tokens: List[int]) -> Iterator[Tuple[str, np.ndarray]]:
    for line, layers in items:
        tokens[0] += layers.shape[1]
        yield line, layers
