"""`python -m spacy_elmo evaluate`: perplexity of a biLM on a text file (full softmax)."""

import json
from pathlib import Path
from typing import Optional

import typer
from tqdm import tqdm

from ..bilm import load_bilm
from ..bilm.model_info import model_language, read_model_info
from ..errors import SpacyElmoError
from ..runtime import DEFAULT_BATCH_SIZE, set_threads
from ..training.corpus import DEFAULT_MAX_LINE_CHARS, TextCorpus, make_tokenizer
from ..training.evaluation import evaluate_perplexity, require_softmax, scored_targets
from ..training.settings import TrainingSettings
from .app import app


@app.command("evaluate")
def evaluate_command(
    model: str = typer.Argument(
        ..., help="Native model folder with a softmax (e.g. OUTPUT_DIR/model from pretrain), or a bundled model's name"
    ),
    text: Path = typer.Argument(..., help="Text file: .txt, .gz or .jsonl, one sentence or paragraph per line"),
    lang: Optional[str] = typer.Option(None, help="spaCy tokenizer language (default: the model's, else en)"),
    batch_size: int = typer.Option(DEFAULT_BATCH_SIZE, help="Rows per batch"),
    unroll_steps: int = typer.Option(
        TrainingSettings.unroll_steps, help="Tokens per row and batch (the LSTM state carries over)"
    ),
    max_line_chars: int = typer.Option(DEFAULT_MAX_LINE_CHARS, help="Skip (and count) longer lines"),
    device: str = typer.Option("auto", help="auto (CUDA when present), cpu, cuda or cuda:N"),
    threads: Optional[int] = typer.Option(None, help="CPU threads of torch (default: torch's choice, at most the CPUs this process may use)"),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON"),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar"),
) -> None:
    """Forward, backward and mean perplexity of a biLM on a text (full softmax, as bilm-tf's run_test)."""
    try:
        set_threads(threads)
        bilm = load_bilm(model, device=device)
        require_softmax(bilm)
        corpus = TextCorpus([text], make_tokenizer(model_language(read_model_info(model), lang)), max_line_chars)
        sentences = list(corpus.texts())
        total = scored_targets(sentences, batch_size)
        with tqdm(total=total, unit="token", disable=quiet or as_json, dynamic_ncols=True) as bar:
            result = evaluate_perplexity(
                bilm, sentences, batch_size=batch_size, unroll_steps=unroll_steps, progress=bar.update
            )
    except (SpacyElmoError, OSError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1)
    skipped = corpus.stats.describe_skips()
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "forward": result.forward,
                    "backward": result.backward,
                    "mean": result.mean,
                    "tokens": result.n_tokens,
                    "skipped": dict(corpus.stats.skipped),
                }
            )
        )
    else:
        typer.echo(f"forward perplexity  {result.forward:.3f}")
        typer.echo(f"backward perplexity {result.backward:.3f}")
        typer.echo(f"mean perplexity     {result.mean:.3f}  (exp of the mean of both losses)")
        typer.echo(f"tokens              {result.n_tokens:,}")
        if skipped:
            typer.echo(f"skipped: {skipped}", err=True)
