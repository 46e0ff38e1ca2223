"""Every GPU path of spacy-elmo in a few minutes, on a CUDA machine; one JSON of what ran and
what it measured.

    python benchmarks/gpu_check.py                      # on a machine with a CUDA GPU
    python benchmarks/gpu_check.py --device cpu --quick # the same steps on the CPU, to check the script

Steps (each recorded as ok with its figures, or failed with its error, and timed):
  component   `spacy.require_gpu()` and the `elmo` component with device="cuda": layers on the GPU,
              equal to the CPU's (max abs difference)
  bf16        the component with compute_dtype="bfloat16": difference to float32
  train       `spacy train --gpu-id 0` for a few steps of NER with an ELMo listener (smoke data)
  pretrain    `pretrain --device cuda --compute-dtype bf16` for a few steps (smoke text)
  torchrun    the same under a 1-process `torchrun` (nccl on CUDA, gloo on the CPU)
  speed       inference tokens/s of the published `original` architecture (random weights),
              float32 and bfloat16, on the first lines of the smoke text
"""
import gzip
import json
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, List

import typer

ROOT = Path(__file__).resolve().parents[1]
SMOKE_TEXT = ROOT / "data" / "smoke" / "corpus" / "train.txt.gz"
SMOKE_NER = ROOT / "data" / "smoke" / "uner-ewt"
app = typer.Typer(add_completion=False)


def read_lines(n: int) -> List[str]:
    with gzip.open(SMOKE_TEXT, "rt", encoding="utf8") as handle:
        return [line.strip() for line, _ in zip(handle, range(n)) if line.strip()]


def run(command: List[str], cwd: Path) -> str:
    """Run a command; its output, or a RuntimeError with the end of it."""
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... exited {result.returncode}: {result.stderr[-2000:]}")
    return result.stdout


def check_component(device: str, texts: List[str]) -> Dict[str, Any]:
    import numpy as np
    import spacy

    if device.startswith("cuda"):
        spacy.require_gpu()
    results = {}
    outputs = {}
    for name, settings in (("cpu", {"device": "cpu"}), (device, {"device": device})):
        nlp = spacy.blank("en")
        nlp.add_pipe("elmo", config={"model": settings})
        start = time.perf_counter()
        docs = list(nlp.pipe(texts))
        results[f"{name}_seconds"] = time.perf_counter() - start
        outputs[name] = [doc._.elmo for doc in docs]
        results[f"{name}_bilm_device"] = str(nlp.get_pipe("elmo").bilm.device)
    results["max_abs_difference"] = max(float(np.abs(a - b).max()) for a, b in zip(outputs["cpu"], outputs[device]))
    return results


def check_bf16(device: str, texts: List[str]) -> Dict[str, Any]:
    import numpy as np
    import spacy

    layers = {}
    for dtype in ("float32", "bfloat16"):
        nlp = spacy.blank("en")
        nlp.add_pipe("elmo", config={"model": {"device": device, "compute_dtype": dtype}})
        layers[dtype] = [doc._.elmo for doc in nlp.pipe(texts)]
    scale = max(float(np.abs(a).max()) for a in layers["float32"])
    difference = max(float(np.abs(a - b).max()) for a, b in zip(layers["float32"], layers["bfloat16"]))
    return {"max_abs_difference": difference, "max_abs_float32": scale, "outputs_dtype": str(layers["bfloat16"][0].dtype)}


def check_train(device: str, workdir: Path, steps: int) -> Dict[str, Any]:
    python = sys.executable
    run([python, "scripts/convert_uner.py", str(SMOKE_NER), str(workdir / "ner")], ROOT)
    config = workdir / "ner.cfg"
    run([python, "-m", "spacy_elmo", "init-config", str(config), "--pipeline", "ner"], ROOT)
    gpu_id = "0" if device.startswith("cuda") else "-1"
    start = time.perf_counter()
    output = run(
        [python, "-m", "spacy", "train", str(config), "--output", str(workdir / "ner-model"), "--gpu-id", gpu_id,
         "--paths.train", str(workdir / "ner" / "train.spacy"), "--paths.dev", str(workdir / "ner" / "dev.spacy"),
         "--training.max_steps", str(steps), "--training.eval_frequency", str(steps)],
        ROOT,
    )  # fmt: skip
    return {"steps": steps, "seconds": time.perf_counter() - start, "last_lines": output.strip().splitlines()[-3:]}


def pretrain_command(device: str, output: Path, steps: int) -> List[str]:
    return [
        "-m", "spacy_elmo", "pretrain", str(output), str(SMOKE_TEXT), "--preset", "small", "--max-steps", str(steps),
        "--batch-size", "32", "--device", device, "--compute-dtype", "bf16", "--quiet",
    ]  # fmt: skip


def check_pretrain(device: str, workdir: Path, steps: int) -> Dict[str, Any]:
    start = time.perf_counter()
    output = run([sys.executable, *pretrain_command(device, workdir / "pretrain", steps)], ROOT)
    return {"steps": steps, "seconds": time.perf_counter() - start, "summary": output.strip().splitlines()[:2]}


def check_torchrun(device: str, workdir: Path, steps: int) -> Dict[str, Any]:
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "1"]
    start = time.perf_counter()
    output = run([*torchrun, *pretrain_command(device, workdir / "torchrun", steps)], ROOT)
    backend = "nccl" if device.startswith("cuda") else "gloo"
    return {"backend": backend, "steps": steps, "seconds": time.perf_counter() - start, "summary": output.strip().splitlines()[:2]}


def check_speed(device: str, texts: List[str], repeats: int) -> Dict[str, Any]:
    import spacy
    import torch

    from spacy_elmo.bilm import BiLM, BiLMArchitecture
    from spacy_elmo.bilm.published import ARCHITECTURES

    tokenizer = spacy.blank("en").tokenizer
    sentences = [[t.text for t in tokenizer(text) if not t.is_space] for text in texts]
    n_tokens = sum(len(s) for s in sentences)
    torch.manual_seed(0)
    bilm = BiLM(BiLMArchitecture.from_options_json(ARCHITECTURES["original"]))
    bilm.reset_parameters()
    results: Dict[str, Any] = {"architecture": "original (random weights)", "sentences": len(sentences), "tokens": n_tokens}
    for dtype in (torch.float32, torch.bfloat16):
        model = bilm.to(device=device, dtype=dtype).eval()
        model.embed_sentences(sentences[:8])  # warm up
        best = float("inf")
        for _ in range(repeats):
            model.token_cache.clear()
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            start = time.perf_counter()
            model.embed_sentences(sentences)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            best = min(best, time.perf_counter() - start)
        results[f"{str(dtype).split('.')[-1]}_tokens_per_second"] = n_tokens / best
    return results


def step(record: Dict[str, Any], name: str, function: Callable[[], Dict[str, Any]]) -> None:
    start = time.perf_counter()
    try:
        record[name] = {"ok": True, **function()}
    except Exception as err:  # one failed path must not hide the others
        record[name] = {"ok": False, "error": f"{type(err).__name__}: {err}", "traceback": traceback.format_exc()[-3000:]}
    record[name]["wall_seconds"] = time.perf_counter() - start
    print(f"{name}: {'ok' if record[name]['ok'] else 'FAILED: ' + record[name]['error'][:300]}", flush=True)


@app.command()
def main(
    device: str = typer.Option("cuda", help="cuda (the point of the script) or cpu (to check the script itself)"),
    output: Path = typer.Option(ROOT / "benchmarks" / "results" / "gpu_check.json", help="JSON of the results"),
    quick: bool = typer.Option(False, help="Fewer lines and steps (for a check of the script on a CPU)"),
) -> None:
    """Run every GPU path once and write what ran and what it measured."""
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("error: torch sees no CUDA GPU here; run on a GPU machine, or pass --device cpu to check the script")
    texts = read_lines(40 if quick else 400)
    steps = 3 if quick else 20
    record: Dict[str, Any] = {
        "device": device,
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cpu": platform.processor() or platform.machine(),
        "texts": len(texts),
    }
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        step(record, "component", lambda: check_component(device, texts))
        step(record, "bf16", lambda: check_bf16(device, texts))
        step(record, "train", lambda: check_train(device, workdir, steps))
        step(record, "pretrain", lambda: check_pretrain(device, workdir, steps))
        step(record, "torchrun", lambda: check_torchrun(device, workdir, steps))
        step(record, "speed", lambda: check_speed(device, texts[:20] if quick else texts, 1 if quick else 3))
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(record, indent=2), encoding="utf8")
    print(f"wrote {output}: {sum(r['ok'] for r in record.values() if isinstance(r, dict) and 'ok' in r)} of 6 steps ok")


if __name__ == "__main__":
    app()
