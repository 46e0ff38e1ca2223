"""`python -m spacy_elmo embed`: precompute ELMo layers for each line of a text file into hdf5.

The layout is the original tools' (allennlp `elmo --all`): dataset "i" holds line i as float32
(n_layers, n_tokens, width), and "sentence_to_index" maps each line's text to its index (JSON).
"""
import json
from pathlib import Path
from typing import Dict, Iterator, Optional

import typer

from ..errors import SpacyElmoError
from .app import app

TOKENIZERS = ("whitespace", "spacy")


@app.command("embed")
def embed_command(
    input_path: Path = typer.Argument(..., help="Text file, UTF-8, one sentence or document per line"),
    output: Path = typer.Option(..., "--output", "-o", help="hdf5 file to write"),
    model: Optional[str] = typer.Option(None, help="Bundled model name, native model folder, or weights .hdf5 (default: bundled)"),
    options: Optional[Path] = typer.Option(None, help="options.json of a weights .hdf5"),
    tokenize: str = typer.Option("spacy", help="'spacy' (the tokenizer of --lang, as the component sees text) or 'whitespace' (as the original tools)"),
    lang: str = typer.Option("en", help="spaCy language for --tokenize spacy and --sentences"),
    sentences: bool = typer.Option(False, "--sentences", help="Read each line sentence by sentence (spaCy sentencizer)"),
    batch_size: int = typer.Option(64, help="Most sequences per biLM forward pass"),
    max_tokens: int = typer.Option(4096, help="Most padded token slots per forward pass"),
    device: str = typer.Option("cpu", help="cpu, cuda or cuda:N"),
    dtype: str = typer.Option("float32", help="float32 or bfloat16 weights"),
) -> None:
    """Embed every line of INPUT with all biLM layers, writing OUTPUT in the original hdf5 layout."""
    try:
        n_lines = embed_file(
            input_path, output, model=model, options=options, tokenize=tokenize, lang=lang, sentences=sentences,
            batch_size=batch_size, max_tokens=max_tokens, device=device, dtype=dtype, progress=True,
        )  # fmt: skip
    except (SpacyElmoError, OSError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1)
    typer.echo(f"wrote {n_lines:,} lines to {output}")


def embed_file(
    input_path: Path,
    output: Path,
    *,
    model: Optional[str] = None,
    options: Optional[Path] = None,
    tokenize: str = "spacy",
    lang: str = "en",
    sentences: bool = False,
    batch_size: int = 64,
    max_tokens: int = 4096,
    device: str = "cpu",
    dtype: str = "float32",
    progress: bool = False,
) -> int:
    """Embed each line of `input_path` into the hdf5 file `output`; returns the number of lines."""
    import h5py
    import spacy
    from spacy.tokens import Doc
    from tqdm import tqdm

    if tokenize not in TOKENIZERS:
        raise SpacyElmoError(f"unknown --tokenize {tokenize!r}; use one of {TOKENIZERS}")
    if not input_path.is_file():
        raise SpacyElmoError(f"input file not found: {input_path}")
    if not output.parent.is_dir():
        raise SpacyElmoError(f"the folder of the output file does not exist: {output.parent}")
    n_lines = sum(1 for _ in _lines(input_path))
    if n_lines == 0:
        raise SpacyElmoError(f"{input_path} is empty: nothing to embed")
    nlp = spacy.blank(lang)
    if sentences:
        nlp.add_pipe("sentencizer")
    model_block = {"bilm": model, "options": None if options is None else str(options), "batch_size": batch_size,
                   "max_tokens": max_tokens, "device": device, "dtype": dtype}  # fmt: skip
    nlp.add_pipe("elmo", config={"model": model_block})
    nlp.initialize()
    docs: Iterator = (Doc(nlp.vocab, words=line.split()) if tokenize == "whitespace" else line for line in _lines(input_path))
    index: Dict[str, int] = {}
    with h5py.File(output, "w") as out:
        processed = nlp.pipe(docs, batch_size=batch_size)
        for i, (line, doc) in enumerate(tqdm(zip(_lines(input_path), processed), total=n_lines, disable=not progress, unit="line")):
            out.create_dataset(str(i), data=doc._.elmo)
            index.setdefault(line, i)
        out.create_dataset("sentence_to_index", data=[json.dumps(index)], dtype=h5py.string_dtype())
    return n_lines


def _lines(path: Path) -> Iterator[str]:
    """The lines of a UTF-8 text file; a line that is not UTF-8 is an error naming file:line."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                yield raw.decode("utf8").rstrip("\r\n")
            except UnicodeDecodeError as err:
                raise SpacyElmoError(
                    f"{path}:{number}: not UTF-8 text ({err.reason} at byte {err.start}); embed reads UTF-8 text files"
                ) from None
