"""Where the biLM's time goes on ONNX Runtime and on torch: per-operator shares of one fixed batch.

Exports one biLM (`--model`: a bundled name or model folder; or `--size original`: random
weights of the published original architecture, as `bilm_speed.py` writes them) to a float32 and
an int8 ONNX graph (`export_onnx`, `quantize_onnx`) in `--out`, then embeds one batch of
`--sentences` corpus lines (tokenized by spaCy's English tokenizer) in one call each:

* ONNX Runtime, float32 and int8 (`OnnxBiLM.embed_batch`: one run of the graph), with its
  profiler (`SessionOptions.enable_profiling`, `--threads` intra-op threads), the batch run
  cold (no cached token embeddings, so the character CNN runs on every distinct token) after
  one unprofiled warm-up run. Node times are summed by operator type; the nodes inside the LSTM
  loops (the Loop's body) are counted as themselves, and "Loop (own)" is what the Loop node
  takes beyond its body's nodes.
* torch int8 (`load_bilm(..., compute_dtype="int8")`), cold, with `torch.profiler`: self CPU
  time by operator.

Shares are relative, so they hold on a loaded machine where wall-clock figures do not; each
run's CPU seconds (`time.process_time`) are printed beside them.

    OMP_NUM_THREADS=1 python benchmarks/onnx_profile.py --size original --sentences 64
    OMP_NUM_THREADS=1 python benchmarks/onnx_profile.py --model en_base_v2 --sentences 64
"""
import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Dict, List, Set, Tuple

import typer
from bilm_speed import DEFAULT_CORPUS, read_lines, write_random_weights

app = typer.Typer(add_completion=False)
# Operators of the matrix products, shown by where they run.
PRODUCTS = {"MatMul", "Gemm", "FusedMatMul", "MatMulInteger", "DynamicQuantizeMatMul", "DynamicQuantizeLinear", "DequantizeLinear", "Conv", "ConvInteger"}


def subgraph_nodes(path: Path) -> Set[str]:
    """The names of the nodes inside the graph's subgraphs (Loop bodies), at any depth."""
    import onnx

    found: Set[str] = set()

    def visit(graph: "onnx.GraphProto", inside: bool) -> None:
        for node in graph.node:
            if inside:
                found.add(node.name)
            for attribute in node.attribute:
                if attribute.type == onnx.AttributeProto.GRAPH:
                    visit(attribute.g, True)
                for sub in attribute.graphs:
                    visit(sub, True)

    visit(onnx.load(str(path), load_external_data=False).graph, False)
    return found


def ort_profile(path: Path, sentences: List[List[str]], threads: int, optimized: Path) -> Tuple[Counter, float, float, float]:
    """Microseconds by operator type of one cold profiled run, total node µs, CPU seconds and
    the µs of the nodes inside the loops."""
    import onnxruntime

    from spacy_elmo.onnx import OnnxBiLM

    runner = OnnxBiLM(path, threads=threads)
    runner.embed_batch(sentences)  # warm-up (allocations, kernel choice)
    runner.clear_cache()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_profiling = True
    options.profile_file_prefix = str(optimized.with_suffix(""))
    options.optimized_model_filepath = str(optimized)  # the graph as ONNX Runtime runs it (fusions)
    runner.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    runner.embed_batch(sentences)  # warm-up of the profiled session
    runner.clear_cache()
    start = time.process_time()
    runner.embed_batch(sentences)
    cpu = time.process_time() - start
    trace = Path(runner.session.end_profiling())
    events = json.loads(trace.read_text())
    inner = subgraph_nodes(optimized)
    # Only the measured call: its run of the graph is the last.
    runs = [e for e in events if e.get("name") == "model_run"]
    if not runs:
        raise SystemExit(f"no model_run event in {trace}: {sorted({(e.get('cat'), e.get('name')) for e in events if e.get('cat') != 'Node'})}")
    begin, end = runs[-1]["ts"], runs[-1]["ts"] + runs[-1]["dur"]
    by_op: Counter = Counter()
    loop_total, loop_inner = 0.0, 0.0
    for event in events:
        if event.get("cat") != "Node" or not event["name"].endswith("_kernel_time"):
            continue
        if not begin <= event["ts"] <= end:
            continue
        op = event["args"].get("op_name", "?")
        node = event["name"][: -len("_kernel_time")]
        if op == "Loop":
            loop_total += event["dur"]
            continue
        if node in inner:
            loop_inner += event["dur"]
        if op in PRODUCTS:  # products split by where they run: per step in the loops, or once
            op = f"{op} ({'in loops' if node in inner else 'outside'})"
        by_op[op] += event["dur"]
    by_op["Loop (own)"] += max(loop_total - loop_inner, 0.0)
    total = sum(by_op.values())
    trace.unlink()
    return by_op, total, cpu, loop_inner


def torch_profile(folder: Path, block: Dict[str, str], sentences: List[List[str]], threads: int) -> Tuple[Counter, float, float]:
    """Self CPU µs by operator of one cold torch int8 run, their total and CPU seconds."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from spacy_elmo import load_bilm

    torch.set_num_threads(threads)
    bilm = load_bilm(block["bilm"], options=block.get("options"), compute_dtype="int8")
    bilm.embed_batch(sentences)
    bilm.token_cache.clear()
    start = time.process_time()
    bilm.embed_batch(sentences)
    cpu = time.process_time() - start
    bilm.token_cache.clear()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        bilm.embed_batch(sentences)
    by_op: Counter = Counter()
    for item in prof.key_averages(group_by_input_shape=True):
        key = item.key
        if key == "quantized::linear_dynamic" and item.input_shapes and item.input_shapes[0]:
            rows = item.input_shapes[0][:-1]  # the input's leading dims: one step's batch, or every step's
            key = f"quantized::linear_dynamic ({'per step' if len(rows) == 1 and rows[0] <= len(sentences) else 'batched'})"
        by_op[key] += item.self_cpu_time_total
    return by_op, sum(by_op.values()), cpu


def show(title: str, by_op: Counter, total: float, cpu: float, top: int) -> None:
    print(f"\n{title}: node time {total / 1e6:.3f} s, CPU {cpu:.3f} s")
    for op, us in by_op.most_common(top):
        print(f"  {op:<40} {100 * us / total:6.1f}%  {us / 1e6:8.3f} s")


@app.command()
def main(
    model: str = typer.Option("", help="a bundled model's name or a model folder (instead of --size)"),
    size: str = typer.Option("original", help="with no --model: random weights of this preset"),
    sentences: int = typer.Option(64, help="corpus lines in the batch"),
    corpus: Path = typer.Option(DEFAULT_CORPUS, help="text, a sentence a line (.txt or .gz)"),
    skip: int = typer.Option(-1, help="corpus lines to skip first; -1: take the last --sentences lines"),
    threads: int = typer.Option(1, help="intra-op threads of both runtimes"),
    out: Path = typer.Option(Path(tempfile.gettempdir()) / "onnx-profile", help="folder for the weights and graphs (kept, reused)"),
    top: int = typer.Option(14, help="operators shown per run"),
    no_torch: bool = typer.Option(False, help="skip the torch int8 profile"),
) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    import spacy

    from spacy_elmo import load_bilm
    from spacy_elmo.onnx import export_onnx, quantize_onnx

    name = model.replace("/", "_") if model else size
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    block = {"bilm": model}
    if not model:
        if not (folder / "weights.hdf5").exists():
            write_random_weights(size, folder)
        block = {"bilm": str(folder / "weights.hdf5"), "options": str(folder / "options.json")}
    float32, int8 = folder / "float32.onnx", folder / "int8.onnx"
    if not float32.exists():
        export_onnx(load_bilm(block["bilm"], options=block.get("options")), float32)
    if not int8.exists():
        quantize_onnx(float32, int8)
    lines = read_lines(corpus, 10**9)
    lines = lines[-sentences:] if skip < 0 else lines[skip : skip + sentences]
    nlp = spacy.blank("en")
    batch = [[t.text for t in doc if not t.is_space] for doc in nlp.tokenizer.pipe(lines)]
    batch = [s for s in batch if s]
    n_words = sum(map(len, batch))
    print(f"{name}: {len(batch)} sentences, {n_words} tokens, {len({t for s in batch for t in s})} distinct, threads={threads}")
    for label, path in (("ONNX Runtime float32", float32), ("ONNX Runtime int8", int8)):
        by_op, total, cpu, inner = ort_profile(path, batch, threads, folder / f"{path.stem}.optimized.onnx")
        show(f"{label} ({100 * inner / total:.0f}% of node time inside the LSTM loops)", by_op, total, cpu, top)
    if not no_torch:
        by_op, total, cpu = torch_profile(folder, block, batch, threads)
        show("torch int8 (self CPU time)", by_op, total, cpu, top)


if __name__ == "__main__":
    app()
