"""Tokens/second and peak memory of the biLM, beside AllenNLP's `_ElmoBiLm` on the same weights.

Random weights in the original hdf5 layout (the published architectures) are written to a
temporary folder; both implementations load that file and embed the same sentences, stateless.
Each implementation runs in its own process so that its peak memory is its own.

    python benchmarks/bilm_speed.py --size small
    python benchmarks/bilm_speed.py --size original --sentences 256
    python benchmarks/bilm_speed.py --size small --dtype bfloat16
"""
import gzip
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List

import numpy as np
import typer

ROOT = Path(__file__).resolve().parents[1]
# In the repository, so a fresh clone runs every benchmark; the README's figures name the corpus they used.
DEFAULT_CORPUS = ROOT / "data" / "smoke" / "corpus" / "train.txt.gz"
DEFAULT_REFERENCE = ROOT.parent / "shared" / "tools" / "allennlp_reference.py"
SIZES = ("small", "medium", "original")  # presets of spacy_elmo.training: the published models

app = typer.Typer(add_completion=False)


def memory_bytes(field: str) -> int:
    """VmRSS (now) or VmHWM (peak since the last reset) of this process, from /proc."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def read_lines(corpus: Path, n: int) -> List[str]:
    """The first `n` non-empty lines of a text file (.txt or .gz); fewer when the file is shorter."""
    if not corpus.is_file():
        raise SystemExit(f"error: no corpus at {corpus}; give one with --corpus (.txt or .txt.gz, a sentence a line)")
    opener = gzip.open if corpus.name.endswith(".gz") else open
    with opener(corpus, "rt", encoding="utf-8") as handle:
        lines = [line.strip() for line in itertools.islice((line for line in handle if line.strip()), n)]
    if len(lines) < n:
        print(f"note: {corpus} has {len(lines)} lines, fewer than the {n} asked for; using them all")
    return lines


def read_sentences(corpus: Path, n: int) -> List[List[str]]:
    """The first `n` lines of the corpus, tokenized by spaCy's English tokenizer."""
    import spacy

    nlp = spacy.blank("en")
    lines = read_lines(corpus, n)
    return [[t.text for t in doc if not t.is_space] for doc in nlp.pipe(lines)]


def write_random_weights(size: str, folder: Path) -> None:
    import torch

    from spacy_elmo.bilm import BiLM, BiLMArchitecture, export_original
    from spacy_elmo.training.presets import preset_architecture

    torch.manual_seed(0)
    config = BiLMArchitecture.from_options_json(preset_architecture(size))
    bilm = BiLM(config)
    bilm.reset_parameters()
    export_original(bilm, folder)


def run_worker(
    impl: str, folder: Path, sentences_file: Path, out: Path, batch_size: int, dtype: str, reference: Path, threads: int,
    repeats: int,
) -> None:
    import torch

    torch.manual_seed(0)
    if threads:
        torch.set_num_threads(threads)
    sentences = json.loads(sentences_file.read_text())
    if impl == "spacy_elmo":
        from spacy_elmo import load_bilm

        reset_peak()
        baseline = memory_bytes("VmRSS")
        bilm = load_bilm(folder / "weights.hdf5", options=folder / "options.json", compute_dtype=dtype)
        loaded = memory_bytes("VmHWM")

        def embed() -> list:
            bilm.token_cache.clear()  # every repeat starts cold
            return bilm.embed_sentences(sentences, batch_size=batch_size)

    else:
        sys.path.insert(0, str(reference.parent))
        from allennlp_reference import load_allennlp_elmo

        elmo = load_allennlp_elmo()
        reset_peak()
        baseline = memory_bytes("VmRSS")
        bilm = elmo._ElmoBiLm(str(folder / "options.json"), str(folder / "weights.hdf5")).eval()
        loaded = memory_bytes("VmHWM")
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]), reverse=True)

        def embed() -> list:
            outputs = [None] * len(sentences)
            with torch.no_grad():
                for first in range(0, len(order), batch_size):
                    rows = order[first : first + batch_size]
                    bilm._elmo_lstm.reset_states()
                    result = bilm(elmo.batch_to_ids([sentences[i] for i in rows]))
                    layers = torch.stack(result["activations"], dim=1)  # (B, L+1, T+2, 2P)
                    for b, i in enumerate(rows):
                        n = len(sentences[i])
                        outputs[i] = layers[b, :, 1 : n + 1].numpy()
            return outputs

    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        outputs = embed()
        times.append(time.perf_counter() - start)
    seconds = min(times)
    n_tokens = sum(len(s) for s in sentences)
    np.savez(out.with_suffix(".npz"), *outputs)
    out.write_text(json.dumps({
        "tokens_per_second": n_tokens / seconds,
        "seconds": seconds,
        "tokens": n_tokens,
        "peak_after_load_mb": (loaded - baseline) / 2**20,
        "peak_total_mb": (memory_bytes("VmHWM") - baseline) / 2**20,
    }))


@app.command()
def main(
    size: str = typer.Option("small", help="small, medium or original"),
    sentences: int = typer.Option(512, help="how many corpus lines to embed"),
    batch_size: int = typer.Option(64),
    dtype: str = typer.Option("float32", help="float32 or bfloat16 (ours only)"),
    corpus: Path = typer.Option(DEFAULT_CORPUS, help="text, a sentence a line (.txt or .gz); default: the 200-line sample in data/smoke"),
    reference: Path = typer.Option(DEFAULT_REFERENCE, help="allennlp_reference.py; skipped when missing"),
    threads: int = typer.Option(0, help="torch threads for both implementations (0: torch's default)"),
    repeats: int = typer.Option(3, help="timed passes per implementation; the fastest counts"),
    worker: str = typer.Option("", hidden=True),
    folder: Path = typer.Option(Path("."), hidden=True),
    sentences_file: Path = typer.Option(Path("."), hidden=True),
    out: Path = typer.Option(Path("."), hidden=True),
) -> None:
    if worker:
        run_worker(worker, folder, sentences_file, out, batch_size, dtype, reference, threads, repeats)
        return
    if size not in SIZES:
        raise typer.BadParameter(f"size must be one of {sorted(SIZES)}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        write_random_weights(size, tmp_path)
        weights_mb = (tmp_path / "weights.hdf5").stat().st_size / 2**20
        texts = read_sentences(corpus, sentences)
        (tmp_path / "sentences.json").write_text(json.dumps(texts))
        impls = ["spacy_elmo"] + (["allennlp"] if reference.is_file() else [])
        results = {}
        for impl in impls:
            out_file = tmp_path / f"{impl}.json"
            subprocess.run(
                [sys.executable, __file__, "--worker", impl, "--folder", str(tmp_path), "--sentences-file",
                 str(tmp_path / "sentences.json"), "--out", str(out_file), "--batch-size", str(batch_size),
                 "--dtype", dtype if impl == "spacy_elmo" else "float32", "--reference", str(reference),
                 "--threads", str(threads), "--repeats", str(repeats)],
                check=True,
            )
            results[impl] = json.loads(out_file.read_text())
        n_tokens = results["spacy_elmo"]["tokens"]
        print(f"size={size} dtype={dtype} sentences={len(texts)} tokens={n_tokens} batch_size={batch_size} "
              f"threads={threads or 'default'} best of {repeats} weights={weights_mb:.1f} MB (hdf5, float32)")
        for impl, r in results.items():
            print(f"{impl:>10}: {r['tokens_per_second']:9.1f} tokens/s ({r['seconds']:.2f} s)  "
                  f"peak memory above start: {r['peak_total_mb']:.0f} MB (after load {r['peak_after_load_mb']:.0f} MB)")
        if "allennlp" in results:
            ours = np.load(tmp_path / "spacy_elmo.npz")
            theirs = np.load(tmp_path / "allennlp.npz")
            diff = max(float(np.abs(ours[k] - theirs[k]).max()) if ours[k].size else 0.0 for k in ours.files)
            speedup = results["spacy_elmo"]["tokens_per_second"] / results["allennlp"]["tokens_per_second"]
            print(f"speed-up: {speedup:.2f}x   max |ours - allennlp| over all layers: {diff:.2e}")
        print(f"peak memory / weights: {results['spacy_elmo']['peak_total_mb'] / weights_mb:.2f}")


if __name__ == "__main__":
    app()
