"""Pretraining speed and what it buys: tokens/s, MFU and held-out perplexity after a fixed
token budget, for each setting of the recipe (negatives, rows, BPTT length, precision).

Each setting trains a fresh model on the first lines of the training text (the same lines and
vocabulary for every setting) until it has seen `--tokens` tokens, scoring the first
`--heldout-lines` lines of the held-out text with the full softmax every `--eval-tokens` tokens
and at the end. Tokens/s is the run's own (every step, warm-up included, evaluation left out);
steady tokens/s leaves out the first quarter of the steps too (warm-up, and compilation with
`compile=1`), as a run of many hours sees it.

MFU = model FLOPs per token × tokens/s ÷ the measured peak of this machine's matrix products,
in float32 and in bfloat16 (each measured with torch.mm, warmed, best of several runs).
Model FLOPs per training token = 3 × forward FLOPs of: the char CNN over all M character
positions, the highways and projection, both LSTM directions, and the softmax over the true id
and the negatives in both directions.

    python benchmarks/pretrain_speed.py --text corpus/lm/train.txt.gz --heldout corpus/lm/heldout.txt.gz \
        --arch bundled --setting negatives=8192 --setting negatives=2048 --tokens 1M
    python benchmarks/pretrain_speed.py --arch small --setting negatives=8192 --tokens 100k

Without `--text`, it trains on the 200-line sample in `data/smoke` (a fresh clone runs it); without
`--heldout`, it reports no perplexity.
"""

import gzip
import itertools
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import torch
import typer

from spacy_elmo.bilm import BiLMArchitecture
from spacy_elmo.bilm.loading import resolve_model_path
from spacy_elmo.cli.pretrain import parse_count
from spacy_elmo.training import TrainingSettings, pretrain
from spacy_elmo.training.presets import apply_overrides, parse_overrides

try:
    from spacy_elmo.training import preset_architecture
except ImportError:  # an earlier commit's package, timed by pretrain_speed_compare.sh
    from spacy_elmo.training import preset_options as preset_architecture

ROOT = Path(__file__).resolve().parents[1]
app = typer.Typer(add_completion=False)
# A setting's keys and the TrainingSettings field each sets.
SETTING_KEYS = {
    "negatives": "negatives",
    "rows": "batch_size",
    "bptt": "unroll_steps",
    "precision": "compute_dtype",
    "compile": "compile",
}


def matmul_peak(dtype: torch.dtype, size: int, seconds: float = 3.0) -> float:
    """FLOP/s of a square torch.mm of `size` in `dtype`, warmed, best of repeated runs."""
    a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
    out = torch.mm(a, b)
    torch.mm(a, b, out=out)
    best = float("inf")
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop or best == float("inf"):
        start = time.perf_counter()
        torch.mm(a, b, out=out)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best


def cpu_model() -> str:
    """The CPU's model name and its bfloat16 / AMX flags, from /proc/cpuinfo (Linux)."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf8")
    except OSError:
        return "unknown"
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "unknown")
    flags = next((line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("flags")), [])
    return " ".join([name, *[f for f in ("avx512_bf16", "amx_bf16") if f in flags]])


def model_flops(config: BiLMArchitecture, n_candidates: int) -> float:
    """Training FLOPs per token (3 × forward; a multiply-add is 2 FLOPs)."""
    e, f, p, c = config.char_embedding_dim, config.n_filters, config.projection_dim, config.lstm_dim
    chars = config.max_characters_per_token
    encoder = sum(2 * (chars - w + 1) * w * e * n for w, n in config.filters)
    encoder += config.n_highway * 2 * f * 2 * f + (2 * f * p if config.has_token_projection else 0)
    lstm = 2 * config.n_layers * (2 * (p + p) * 4 * c + (2 * c * p if config.has_lstm_projection else 0))
    softmax = 2 * 2 * p * n_candidates
    return 3.0 * (encoder + lstm + softmax)


def steady_speed(metrics_path: Path) -> float:
    """Tokens/s between the first and the last logged step (each log has the run's cumulative
    tokens/s since its start, evaluation left out)."""
    logs = [json.loads(line) for line in metrics_path.read_text().splitlines()]
    logs = [m for m in logs if "tokens_per_second" in m]
    first, last = logs[0], logs[-1]
    seconds = last["tokens"] / last["tokens_per_second"] - first["tokens"] / first["tokens_per_second"]
    return (last["tokens"] - first["tokens"]) / seconds if seconds > 0 else float("nan")


def architecture(name: str) -> Dict[str, Any]:
    """Options of a preset, or of the bundled default model ("bundled")."""
    if name == "bundled":
        return json.loads((resolve_model_path(None) / "config.json").read_text(encoding="utf8"))["options"]
    return preset_architecture(name)


def parse_setting(text: str) -> Dict[str, Any]:
    """"negatives=2048,rows=128" → TrainingSettings fields."""
    fields: Dict[str, Any] = {}
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        if key not in SETTING_KEYS:
            raise typer.BadParameter(f"unknown key {key!r} in {text!r}; use {', '.join(SETTING_KEYS)}")
        if key == "precision":
            fields[SETTING_KEYS[key]] = value
        elif key == "compile":
            fields[SETTING_KEYS[key]] = value.lower() in ("1", "true", "yes")
        else:
            fields[SETTING_KEYS[key]] = int(value)
    return fields


def first_lines(source: Path, n_lines: int, target: Path) -> Path:
    opener = gzip.open if source.name.endswith(".gz") else open
    with opener(source, "rt", encoding="utf8") as text:
        target.write_text("".join(itertools.islice(text, n_lines)), encoding="utf8")
    return target


@app.command()
def main(
    text: Path = typer.Option(ROOT / "data" / "smoke" / "corpus" / "train.txt.gz", help="Training text (.txt or .gz; default: the 200-line sample in data/smoke)"),
    heldout: Optional[Path] = typer.Option(None, help="Held-out text (default: none, no perplexity)"),
    heldout_lines: int = typer.Option(2000, help="Held-out lines scored (0: no perplexity)"),
    eval_tokens: str = typer.Option("500k", help="Training tokens between held-out evaluations"),
    vocab: Optional[Path] = typer.Option(None, help="Softmax vocabulary (default: built from the lines used)"),
    max_vocab_size: int = typer.Option(40000, help="Vocabulary size when it is built from the text"),
    arch: str = typer.Option("bundled", help="Architecture: 'bundled' (the default model's) or a preset"),
    set_: List[str] = typer.Option([], "--set", help="Architecture change KEY=VALUE, as `pretrain --set`"),
    setting: List[str] = typer.Option(["negatives=8192"], help="Recipe setting, e.g. negatives=2048,rows=128"),
    tokens: str = typer.Option("1M", help="Training tokens per setting"),
    threads: int = typer.Option(2, help="torch CPU threads"),
    output: Optional[Path] = typer.Option(None, help="Append one JSON line per setting to this file"),
    label: str = typer.Option("", help="A note kept in each record, e.g. which code ran"),
) -> None:
    for path in (text, heldout):
        if path is not None and not path.is_file():
            raise SystemExit(f"error: no file at {path}")
    torch.set_num_threads(threads)
    budget = parse_count(tokens, "--tokens")
    peak32 = matmul_peak(torch.float32, 2048)
    peak16 = matmul_peak(torch.bfloat16, 2048 if torch.cuda.is_available() else 512)
    print(
        f"torch {torch.__version__}, {threads} threads; matmul peak float32 {peak32 / 1e9:.1f} GFLOP/s, "
        f"bfloat16 {peak16 / 1e9:.1f} GFLOP/s"
    )
    options = apply_overrides(architecture(arch), parse_overrides(set_))
    config = BiLMArchitecture.from_options_json(options)
    with tempfile.TemporaryDirectory() as tmp:
        held = first_lines(heldout, heldout_lines, Path(tmp) / "heldout.txt") if heldout and heldout_lines else None
        # ~15 tokens a line; enough lines that the budget is not cut short by the end of the text
        lines = first_lines(text, budget // 10 + 1000, Path(tmp) / "text.txt")
        for index, fields in enumerate(parse_setting(s) for s in setting):
            settings = TrainingSettings(max_vocab_size=max_vocab_size, **fields)
            per_step = settings.batch_size * settings.unroll_steps
            settings.epochs = None
            settings.token_budget = budget
            settings.checkpoint_every = 10**9
            settings.eval_every = max(1, parse_count(eval_tokens, "--eval-tokens") // per_step)
            settings.log_every = max(1, budget // per_step // 4)
            run_dir = Path(tmp) / f"run{index}"
            result = pretrain(
                run_dir, [lines], options, settings, vocab_path=vocab, heldout_path=held, device="cpu", show_progress=False
            )
            vocab_size = json.loads((run_dir / "run.json").read_text())["vocab_size"]
            n_candidates = settings.negatives + 1 if settings.negatives < vocab_size else vocab_size
            flops = model_flops(config, n_candidates)
            speed = result.tokens_per_second
            record: Dict[str, Any] = {
                "arch": " ".join([arch, *set_]),
                "setting": setting[index],
                "tokens": result.tokens,
                "steps": result.steps,
                "tokens_per_second": round(speed),
                "steady_tokens_per_second": round(steady_speed(run_dir / "metrics.jsonl")),
                "model_gflop_per_token": round(flops / 1e9, 4),
                "mfu_float32_peak": round(speed * flops / peak32, 4),
                "mfu_bfloat16_peak": round(speed * flops / peak16, 4),
                "last_loss": round(result.loss, 4) if result.loss is not None else None,
                "threads": threads,
                "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "(unset)"),
                "cpu": cpu_model(),
                "torch": torch.__version__,
                "label": label,
            }
            if result.heldout is not None:
                record["heldout_perplexity"] = round(result.heldout.mean, 2)
                record["heldout_tokens"] = result.heldout.n_tokens
                metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
                curve = {m["tokens"]: round(m["heldout_perplexity"], 2) for m in metrics if "heldout_perplexity" in m}
                record["heldout_curve"] = sorted(curve.items())
            print(json.dumps(record), flush=True)
            if output is not None:
                with open(output, "a", encoding="utf8") as file:
                    file.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    app()
