"""Training tokens/second of `pretrain` for the tiny and small presets, and the share of this
machine's measured float32 matrix-multiply peak that it uses.

Each preset trains for a fixed time with the default recipe (batch 128 × 20, 8192 sampled
negatives, Adagrad) on the first lines of the shared corpus; the speed is the run's own
tokens/second (every step, warm-up included).

Model FLOPs per training token = 3 × (forward matmul/convolution FLOPs) of: the token encoder
once per token (char CNN over all M positions, highways, projection; both directions read the
same tokens), both LSTM directions, and the softmax over the true id + negatives in both
directions. That is the issue's measure ("model" column). The trainer encodes each distinct
token of a batch once, and the encoder drops character positions that cannot change its output,
so it executes fewer FLOPs: the "executed" column counts the encoder for the measured distinct
tokens per batch at the measured character width instead.

    python benchmarks/pretrain_speed.py
    python benchmarks/pretrain_speed.py --seconds 120 --presets small --threads 1
"""

import gzip
import itertools
import json
import tempfile
import time
from pathlib import Path
from typing import Dict, List

import torch
import typer

from spacy_elmo.bilm import BiLMConfig
from spacy_elmo.bilm.characters import PAD_CHAR, CharacterMapper
from spacy_elmo.training import TrainingSettings, pretrain, preset_options
from spacy_elmo.training.batcher import RowBatcher
from spacy_elmo.training.corpus import Cursor, TextCorpus, make_tokenizer

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "corpus" / "train.txt.gz"

app = typer.Typer(add_completion=False)


def matmul_peak(size: int = 4096, seconds: float = 3.0) -> float:
    """Float32 FLOP/s of a large square torch.matmul, best of repeated runs."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.matmul(a, b)
    best = float("inf")
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        start = time.perf_counter()
        torch.matmul(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best


def forward_flops(config: BiLMConfig, n_candidates: int, chars: int) -> Dict[str, float]:
    """Forward FLOPs per token position, by part (multiply-add = 2 FLOPs), for a character axis
    of `chars` positions."""
    e, f, p, c = config.char_embedding_dim, config.n_filters, config.projection_dim, config.lstm_dim
    encoder = sum(2 * (chars - w + 1) * w * e * n for w, n in config.filters)
    encoder += config.n_highway * 2 * f * 2 * f + (2 * f * p if config.has_token_projection else 0)
    lstm = 2 * config.n_layers * (2 * (p + p) * 4 * c + (2 * c * p if config.has_lstm_projection else 0))
    softmax = 2 * 2 * p * n_candidates
    return {"encoder": encoder, "lstm": lstm, "softmax": softmax}


def encoder_workload(text: Path, config: BiLMConfig, settings: TrainingSettings, n_batches: int = 20):
    """Mean share of distinct tokens per batch, and mean character width after the encoder's
    exact trimming (longest token with begin/end of word + widest filter, at most M)."""
    corpus = TextCorpus([text], make_tokenizer(settings.lang))
    batcher = RowBatcher(corpus.sentences(Cursor()), settings.batch_size, settings.unroll_steps)
    characters = CharacterMapper(config.max_characters_per_token)
    shares, widths = [], []
    for _ in range(n_batches):
        window = batcher.next_window()
        if window is None:
            break
        distinct = sorted({t for rows in window.inputs for row in rows for t in row})
        ids = characters.encode(distinct)
        used = int(((ids != PAD_CHAR) & (ids != 0)).sum(axis=1).max())
        shares.append(len(distinct) / (settings.batch_size * settings.unroll_steps))
        widths.append(min(config.max_characters_per_token, used + config.max_filter_width))
    return sum(shares) / len(shares), sum(widths) / len(widths)


@app.command()
def main(
    presets: List[str] = typer.Option(["tiny", "small"], help="Presets to measure"),
    seconds: float = typer.Option(60.0, help="Training time per preset"),
    lines: int = typer.Option(20000, help="Corpus lines to train on"),
    corpus: Path = typer.Option(DEFAULT_CORPUS, help="Text (.txt or .gz)"),
    threads: int = typer.Option(
        0, help="torch CPU threads (0: torch's default); the peak is measured with the same"
    ),
) -> None:
    if threads:
        torch.set_num_threads(threads)
    peak = matmul_peak()
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; float32 matmul peak {peak / 1e9:.1f} GFLOP/s"
    )
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "text.txt"
        opener = gzip.open if corpus.name.endswith(".gz") else open
        with opener(corpus, "rt", encoding="utf8") as source:
            text.write_text("".join(itertools.islice(source, lines)), encoding="utf8")
        for preset in presets:
            settings = TrainingSettings(max_seconds=seconds, n_epochs=None, checkpoint_every=10**9)
            options = preset_options(preset)
            result = pretrain(Path(tmp) / preset, [text], options, settings, device="cpu", show_progress=False)
            vocab_size = json.loads((Path(tmp) / preset / "run.json").read_text())["vocab_size"]
            n_candidates = (
                settings.n_negative_samples + 1 if settings.n_negative_samples < vocab_size else vocab_size
            )
            config = BiLMConfig.from_options(options)
            parts = forward_flops(config, n_candidates, config.max_characters_per_token)
            share, width = encoder_workload(text, config, settings)
            executed_parts = forward_flops(config, n_candidates, round(width))
            model = 3 * sum(parts.values())
            executed = 3 * (share * executed_parts["encoder"] + parts["lstm"] + parts["softmax"])
            speed = result.tokens_per_second
            print(
                f"{preset:>6}: {speed:10,.0f} tokens/s over {result.steps} steps (vocabulary {vocab_size:,}, "
                f"last loss {result.loss:.2f})\n"
                f"        model FLOPs {model / 1e6:.1f} M/token (encoder {3 * parts['encoder'] / 1e6:.1f}, "
                f"LSTM {3 * parts['lstm'] / 1e6:.1f}, softmax {3 * parts['softmax'] / 1e6:.1f}): "
                f"{speed * model / peak:.1%} of peak\n"
                f"        executed {executed / 1e6:.1f} M/token ({share:.0%} distinct tokens, "
                f"{width:.1f} character positions): {speed * executed / peak:.1%} of peak"
            )


if __name__ == "__main__":
    app()
