"""`python -m spacy_elmo pretrain`: train or fine-tune a biLM from raw text."""

import re
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from ..errors import SpacyElmoError
from ..training.errors import TrainingSetupError
from ..training.presets import DEFAULT_PRESET, PRESETS, apply_overrides, parse_overrides, preset_architecture
from ..runtime import STORAGE_DTYPES, set_threads
from ..training.settings import OPTIMIZERS, RESUMABLE, TrainingSettings
from ..training.run import pretrain, resume
from .app import app
from .removed_options import RemovedOptionsCommand

_DURATION = re.compile(r"^\s*([0-9.]+)\s*([smhd]?)\s*$")
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_COUNT = re.compile(r"^\s*([0-9.]+(?:e[0-9]+)?)\s*([kmb]?)\s*$", re.IGNORECASE)
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9}

EXIT_INTERRUPTED = 130  # the shell's code for a process stopped by Ctrl-C


def _default(name: str) -> str:
    """"(default X)" for a training setting, from its one source, `TrainingSettings`."""
    return f"(default {getattr(TrainingSettings, name)})"


@app.command("pretrain", cls=RemovedOptionsCommand)
def pretrain_command(
    output_dir: Path = typer.Argument(..., help="Folder for run.json, checkpoints and the trained model/"),
    texts: Optional[List[Path]] = typer.Argument(
        None, help="Training text: .txt, .gz, .jsonl ('text' field); one sentence or paragraph per line"
    ),
    preset: Optional[str] = typer.Option(None, help=f"Architecture: {', '.join(PRESETS)} (default {DEFAULT_PRESET})"),
    set_: Optional[List[str]] = typer.Option(
        None, "--set", help="Architecture setting KEY=VALUE, e.g. lstm.dim=512 or n_highway=2 (repeatable)"
    ),
    init: Optional[Path] = typer.Option(
        None, help="Fine-tune this model: a bundled model's name, a native folder, or original .hdf5 (with --init-options)"
    ),
    init_options: Optional[Path] = typer.Option(
        None, help="options.json of original hdf5 weights given to --init"
    ),
    vocab: Optional[Path] = typer.Option(
        None, help="Softmax vocabulary file (<S>, </S>, <UNK> first) instead of one built from the text"
    ),
    heldout: Optional[Path] = typer.Option(
        None, help="Held-out text for perplexity (full softmax) every --eval-every steps"
    ),
    lang: Optional[str] = typer.Option(None, help=f"spaCy language of the tokenizer {_default('lang')}"),
    batch_size: Optional[int] = typer.Option(None, help=f"Rows per batch and process {_default('batch_size')}"),
    unroll_steps: Optional[int] = typer.Option(None, help=f"Truncated-backpropagation window {_default('unroll_steps')}"),
    negatives: Optional[int] = typer.Option(
        None, help=f"Sampled-softmax negatives {_default('negatives')}; full softmax if the vocabulary is not larger"
    ),
    optimizer: Optional[str] = typer.Option(None, help=f"{', '.join(OPTIMIZERS)} {_default('optimizer')}"),
    learning_rate: Optional[float] = typer.Option(None, help=f"Learning rate {_default('learning_rate')}"),
    clip_norm: Optional[float] = typer.Option(None, help=f"Global gradient-norm clip {_default('clip_norm')}"),
    dropout: Optional[float] = typer.Option(None, help=f"Dropout on each LSTM layer's input {_default('dropout')}"),
    compute_dtype: Optional[str] = typer.Option(
        None,
        "--compute-dtype",
        help=f"float32 or bf16 (bfloat16 matrix products; float32 weights, optimizer, state and loss) {_default('compute_dtype')}",
    ),
    compile_: Optional[bool] = typer.Option(
        None,
        "--compile/--no-compile",
        help=f"Fuse each LSTM step's element-wise work with torch.compile: faster long runs, a slower start {_default('compile')}",
    ),
    max_vocab_size: Optional[int] = typer.Option(None, help="Most softmax entries, specials included"),
    min_count: Optional[int] = typer.Option(None, help=f"Least occurrences of a vocabulary word {_default('min_count')}"),
    max_line_chars: Optional[int] = typer.Option(None, help=f"Skip (and count) longer lines {_default('max_line_chars')}"),
    seed: Optional[int] = typer.Option(None, help=f"Random seed {_default('seed')}"),
    epochs: Optional[int] = typer.Option(None, help=f"Passes over the text {_default('epochs')}; 0: no limit"),
    max_steps: Optional[int] = typer.Option(None, help="Stop after this many steps"),
    token_budget: Optional[str] = typer.Option(None, help="Stop after this many training tokens, e.g. 50M"),
    max_time: Optional[str] = typer.Option(None, help="Stop after this long (this invocation), e.g. 90m, 2h"),
    checkpoint_every: Optional[int] = typer.Option(None, help=f"Steps between checkpoints {_default('checkpoint_every')}"),
    eval_every: Optional[int] = typer.Option(None, help=f"Steps between held-out evaluations {_default('eval_every')}"),
    log_every: Optional[int] = typer.Option(None, help=f"Steps between lines of metrics.jsonl {_default('log_every')}"),
    keep_checkpoints: Optional[int] = typer.Option(None, help=f"Checkpoints kept {_default('keep_checkpoints')}"),
    resume_run: bool = typer.Option(
        False, "--resume", help="Continue the run in OUTPUT_DIR exactly where it stopped"
    ),
    export_original: bool = typer.Option(
        False, "--export-original", help="Also write original/options.json + weights.hdf5"
    ),
    storage_dtype: Optional[str] = typer.Option(
        None,
        "--storage-dtype",
        help=f"Type the final model is saved in: {', '.join(STORAGE_DTYPES)} (float16-softmax: float16 for the softmax only) {_default('storage_dtype')}",
    ),
    device: str = typer.Option("auto", help="auto, cpu or cuda (under torchrun: one GPU per process)"),
    threads: Optional[int] = typer.Option(
        None, help="CPU threads of torch (default: torch's choice, at most the CPUs this process may use)"
    ),
    quiet: bool = typer.Option(False, help="No progress bar"),
) -> None:
    """Train a biLM from raw text (bilm-tf recipe), or fine-tune one with --init.

    Run data-parallel with: torchrun --nproc_per_node N -m spacy_elmo pretrain ...
    """
    given: Dict[str, Any] = {
        "lang": lang,
        "batch_size": batch_size,
        "unroll_steps": unroll_steps,
        "negatives": negatives,
        "optimizer": optimizer,
        "learning_rate": learning_rate,
        "clip_norm": clip_norm,
        "dropout": dropout,
        "compute_dtype": compute_dtype,
        "max_vocab_size": max_vocab_size,
        "min_count": min_count,
        "max_line_chars": max_line_chars,
        "seed": seed,
        "epochs": epochs,
        "max_steps": max_steps,
        "token_budget": parse_count(token_budget, "--token-budget"),
        "max_time": parse_duration(max_time),
        "checkpoint_every": checkpoint_every,
        "eval_every": eval_every,
        "log_every": log_every,
        "keep_checkpoints": keep_checkpoints,
        "storage_dtype": storage_dtype,
        "compile": compile_,
    }
    given = {k: v for k, v in given.items() if v is not None}
    if epochs == 0:
        given["epochs"] = None  # no epoch limit: stop by steps, tokens or time
    try:
        set_threads(threads)
        if resume_run:
            ignored = [
                name
                for name, value in (
                    ("TEXTS", texts),
                    ("--preset", preset),
                    ("--set", set_),
                    ("--init", init),
                    ("--vocab", vocab),
                    ("--heldout", heldout),
                )
                if value
            ]
            ignored += [f"--{k.replace('_', '-')}" for k in given if k not in RESUMABLE]
            if ignored:
                raise TrainingSetupError(
                    f"with --resume the run's stored settings apply; remove {', '.join(ignored)}"
                )
            result = resume(output_dir, given, export=export_original, device=device, show_progress=not quiet)
        else:
            if not texts:
                raise TrainingSetupError("give the training text files after OUTPUT_DIR")
            architecture = None
            if init is None:
                architecture = apply_overrides(preset_architecture(preset or DEFAULT_PRESET), parse_overrides(set_ or []))
            elif preset or set_:
                raise TrainingSetupError("--init fixes the architecture; drop --preset / --set")
            settings = TrainingSettings.from_dict({**TrainingSettings().to_dict(), **given})
            result = pretrain(
                output_dir,
                texts,
                architecture,
                settings,
                init=init,
                init_options=init_options,
                vocab_path=vocab,
                heldout_path=heldout,
                export=export_original,
                device=device,
                show_progress=not quiet,
            )
    except SpacyElmoError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1)
    if not result.main_process:
        raise typer.Exit(EXIT_INTERRUPTED if result.interrupted else 0)
    if result.loss is None and result.steps == 0:
        typer.echo("no training step was run (budget already reached or too little text for one batch)", err=True)
    typer.echo(
        f"steps {result.steps}, tokens {result.tokens:,}, {result.tokens_per_second:,.0f} tokens/s this run"
        + (f", last loss {result.loss:.3f}" if result.loss is not None else "")
    )
    if result.skipped:
        typer.echo("skipped lines: " + ", ".join(f"{n} {reason}" for reason, n in result.skipped.items()))
    typer.echo(f"stopped: {result.stopped_by}")
    if result.interrupted:
        typer.echo(f"the run was interrupted; checkpoint: {result.checkpoint} (no model written)", err=True)
        typer.echo(f"resume it with: python -m spacy_elmo pretrain {result.output_dir} --resume", err=True)
        raise typer.Exit(EXIT_INTERRUPTED)
    if result.heldout is not None:
        h = result.heldout
        typer.echo(f"held-out perplexity {h.mean:.2f} (forward {h.forward:.2f}, backward {h.backward:.2f})")
    typer.echo(f"model: {result.output_dir / 'model'}")


def parse_duration(text: Optional[str]) -> Optional[float]:
    """Seconds in a duration such as 45s, 90m, 2h (None stays None)."""
    if text is None:
        return None
    match = _DURATION.match(text)
    if not match:
        raise typer.BadParameter(f"cannot read duration {text!r}; use e.g. 45s, 90m, 2h", param_hint="--max-time")
    return float(match.group(1)) * _SECONDS[match.group(2)]


def parse_count(text: Optional[str], option: str) -> Optional[int]:
    """The number in a count such as 500000, 50M, 1.5B (None stays None)."""
    if text is None:
        return None
    match = _COUNT.match(text)
    if not match:
        raise typer.BadParameter(f"cannot read count {text!r}; use e.g. 500000, 50M, 1.5B", param_hint=option)
    return int(float(match.group(1)) * _SCALE[match.group(2).lower()])
