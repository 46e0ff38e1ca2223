"""Words/second of the biLM in float32, bfloat16 and int8, side by side, token cache cold and warm,
and the resident memory each model takes once loaded.

Models: `en_base` (bundled) and the published original architecture (`--size original`: random
weights of that size, bilm-tf's initialisation; speed and memory do not depend on the values).
Each (model, dtype) runs in its own process (so its memory is its own: the resident size
after loading, freed memory handed back first, and the peak while loading), embedding the same
corpus lines with `embed_sentences` (stateless, batches of 64): "cold" clears the token cache
before each pass, "warm" runs after a pass has filled it; best of `--repeats`. The machine (CPU
model, the flags that decide int8 and bfloat16 speed, threads, torch) is printed and written
with the figures to `--output` (JSON).

    python benchmarks/int8_speed.py --threads 1
    python benchmarks/int8_speed.py --models original --sentences 128 --repeats 2
"""
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import typer
from bilm_speed import DEFAULT_CORPUS, memory_bytes, read_sentences

ROOT = Path(__file__).resolve().parents[1]
DTYPES = ("float32", "bfloat16", "int8")
FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_bf16", "amx_int8")

app = typer.Typer(add_completion=False)


def machine() -> Dict[str, Any]:
    """The CPU model, the flags int8 and bfloat16 speed depend on, and the software."""
    import torch

    from spacy_elmo.bilm.quantization import int8_engine

    model, flags = platform.processor(), set()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name") and ":" in line:
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and ":" in line:
                flags = set(line.split(":", 1)[1].split())
    try:
        engine = "%s (%s-bit activations)" % (lambda e: (e[0], 7 if e[1] else 8))(int8_engine())
    except Exception as err:  # noqa: BLE001  (reported, not fatal: float32 and bfloat16 still run)
        engine = f"unavailable: {err}"
    return {
        "cpu": model,
        "logical_cpus": len(__import__("os").sched_getaffinity(0)),
        "flags": {flag: flag in flags for flag in FLAGS},
        "torch": torch.__version__,
        "int8_engine": engine,
        "load_average": [round(x, 2) for x in __import__("os").getloadavg()],
    }


def release_freed_memory() -> None:
    """Hand memory that was freed back to the system (glibc's `malloc_trim`), so that the resident
    size is what is still in use; a no-op elsewhere."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def load(model: str, dtype: str) -> Any:
    import torch

    from spacy_elmo.bilm import BiLM, BiLMArchitecture, load_bilm
    from spacy_elmo.bilm.quantization import to_compute_dtype
    from spacy_elmo.training.presets import preset_architecture

    if model in ("small", "medium", "original"):
        torch.manual_seed(0)
        bilm = BiLM(BiLMArchitecture.from_options_json(preset_architecture(model)))
        bilm.reset_parameters()
        return to_compute_dtype(bilm, "cpu", dtype)
    bilm = load_bilm(model, compute_dtype=dtype)
    bilm.drop_softmax()
    return bilm


def run_worker(model: str, dtype: str, sentences_file: Path, out: Path, threads: int, repeats: int, batch_size: int) -> None:
    import torch

    torch.set_num_threads(threads)
    sentences: List[List[str]] = json.loads(sentences_file.read_text())
    before = memory_bytes("VmRSS")
    bilm = load(model, dtype)
    load_peak = memory_bytes("VmHWM") - before
    release_freed_memory()  # what the loader freed (int8: the float weights) is not the model's
    resident = memory_bytes("VmRSS") - before
    words = sum(map(len, sentences))
    bilm.embed_sentences(sentences[:8], batch_size=batch_size)  # warm up torch
    cold, warm = float("inf"), float("inf")
    for _ in range(repeats):
        bilm.token_cache.clear()
        start = time.perf_counter()
        bilm.embed_sentences(sentences, batch_size=batch_size)
        cold = min(cold, time.perf_counter() - start)
        start = time.perf_counter()
        bilm.embed_sentences(sentences, batch_size=batch_size)
        warm = min(warm, time.perf_counter() - start)
    out.write_text(json.dumps({
        "model": model, "dtype": dtype, "words": words, "lines": len(sentences), "threads": torch.get_num_threads(),
        "cold_words_per_s": words / cold, "warm_words_per_s": words / warm, "cold_s": cold, "warm_s": warm,
        "resident_mb_after_load": resident / 2**20, "load_peak_mb": load_peak / 2**20,
        "peak_mb_above_start": (memory_bytes("VmHWM") - before) / 2**20,
    }))


@app.command()
def main(
    models: str = typer.Option("en_base,original", help="comma-separated: bundled names, folders, or small/medium/original (random weights)"),
    dtypes: str = typer.Option(",".join(DTYPES), help="comma-separated compute dtypes"),
    sentences: int = typer.Option(256, help="corpus lines per model"),
    original_sentences: int = typer.Option(128, help="corpus lines for small/medium/original (slower)"),
    corpus: Path = typer.Option(DEFAULT_CORPUS, help="text, a sentence a line (.txt or .gz)"),
    threads: int = typer.Option(1, help="torch threads"),
    repeats: int = typer.Option(3, help="timed passes per setting; the fastest counts"),
    batch_size: int = typer.Option(64),
    output: Path = typer.Option(ROOT / "benchmarks" / "results" / "int8_speed.json", help="JSON written here"),
    note: str = typer.Option("", help="what else ran on the machine, recorded with the figures"),
    worker: str = typer.Option("", hidden=True),
    dtype: str = typer.Option("", hidden=True),
    sentences_file: Path = typer.Option(Path("."), hidden=True),
    out: Path = typer.Option(Path("."), hidden=True),
) -> None:
    if worker:
        run_worker(worker, dtype, sentences_file, out, threads, repeats, batch_size)
        return
    import tempfile

    info = {**machine(), "threads": threads, "corpus": corpus.name, "batch_size": batch_size, "repeats": repeats, "note": note}
    print(json.dumps(info, indent=1))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in models.split(","):
            n = original_sentences if model in ("small", "medium", "original") else sentences
            texts = Path(tmp) / f"{n}.json"
            if not texts.is_file():
                texts.write_text(json.dumps(read_sentences(corpus, n)))
            for name in dtypes.split(","):
                result_file = Path(tmp) / "result.json"
                subprocess.run(
                    [sys.executable, __file__, "--worker", model, "--dtype", name, "--sentences-file", str(texts), "--out",
                     str(result_file), "--threads", str(threads), "--repeats", str(repeats), "--batch-size", str(batch_size)],
                    check=True,
                )
                result = json.loads(result_file.read_text())
                results.append(result)
                base = next(r for r in results if r["model"] == model and r["dtype"] == "float32") if any(
                    r["model"] == model and r["dtype"] == "float32" for r in results) else result
                print(f"{model:>9} {name:>8}: cold {result['cold_words_per_s']:8.1f} words/s ({result['cold_words_per_s'] / base['cold_words_per_s']:.2f}x)  "
                      f"warm {result['warm_words_per_s']:8.1f} words/s ({result['warm_words_per_s'] / base['warm_words_per_s']:.2f}x)  "
                      f"resident after load {result['resident_mb_after_load']:7.1f} MB (load peak {result['load_peak_mb']:.0f} MB)  ({result['lines']} lines, {result['words']} words)",
                      flush=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"machine": info, "results": results}, indent=1) + "\n")
    print(f"written: {output}")


if __name__ == "__main__":
    app()
