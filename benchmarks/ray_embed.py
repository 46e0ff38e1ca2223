"""Rows/s and tokens/s of `embed`'s two engines on the same corpus lines, the time to the first
row (start-up: Ray, model loading) and the peak memory of each process that holds the biLM.

Each configuration runs in a fresh process: the local engine (one process, AllenNLP hdf5) with
1 and 2 torch threads, and `--engine ray` (a local Ray started for the run, Parquet) with 1 and
2 workers of 1 CPU each. "First row" is the first line embedded (local) or the first Parquet
file written (ray); "steady" counts the rows after it over the time until the last row is out
(the output file closed; for ray, the last Parquet file complete, before Ray shuts down).

    python benchmarks/ray_embed.py --corpus ../shared/data/corpus/heldout.txt.gz --lines 2000
    python benchmarks/ray_embed.py --record   # append to results/ray_embed.jsonl
    python benchmarks/ray_embed.py --gpu      # the GPU path: local on cuda vs ray, 1 worker x 1 GPU, bfloat16
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Tuple

import typer
from bilm_speed import DEFAULT_CORPUS, memory_bytes, read_lines

RESULTS = Path(__file__).resolve().parent / "results" / "ray_embed.jsonl"
CONFIGURATIONS = [("local", 1), ("local", 2), ("ray", 1), ("ray", 2)]
GPU_CONFIGURATIONS = [("local", 1), ("ray", 1)]
GPU_SETTINGS = {"device": "cuda", "compute_dtype": "bfloat16"}

app = typer.Typer(add_completion=False)


@app.command()
def main(
    corpus: Path = typer.Option(DEFAULT_CORPUS, help="text, a sentence a line (.txt or .gz); default: the 200-line sample in data/smoke"),
    lines: int = typer.Option(2000, help="how many corpus lines to embed"),
    model: str = typer.Option("en_base", help="the biLM (bundled name, folder, ...)"),
    record: bool = typer.Option(False, help=f"append the figures to {RESULTS.name}"),
    gpu: bool = typer.Option(False, help="the GPU path instead: device cuda, bfloat16, one GPU per ray worker"),
    child: str = typer.Option("", hidden=True),
    count: int = typer.Option(1, hidden=True),
    text: Path = typer.Option(Path("."), hidden=True),
) -> None:
    if child:
        result = run_local(text, model, count, gpu) if child == "local" else run_ray(text, model, count, gpu)
        print(json.dumps(result))
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "lines.txt"
        texts = read_lines(corpus, lines)
        path.write_text("\n".join(texts) + "\n", encoding="utf8")
        results = []
        for engine, count in GPU_CONFIGURATIONS if gpu else CONFIGURATIONS:
            args = [sys.executable, __file__, "--child", engine, "--count", str(count), "--text", str(path), "--model", model]
            args += ["--gpu"] if gpu else []
            done = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": str(count)})
            if done.returncode != 0:
                raise SystemExit(f"{engine} x{count} failed:\n{done.stderr[-3000:]}")
            result = {"engine": engine, "threads" if engine == "local" else "workers": count, "gpu": gpu, **json.loads(done.stdout.strip().splitlines()[-1])}
            print(json.dumps(result), flush=True)
            results.append(result)
    summary = {"gpu": True} if gpu else compare(results)
    print(json.dumps(summary))
    if record:
        note = {"note": f"{time.strftime('%Y-%m-%d')}, {cpu_name()}, {os.cpu_count()} cores shared with other jobs (noisy); "
                        f"{len(texts)} lines of {corpus.name}, model {model}"}  # fmt: skip
        with RESULTS.open("a", encoding="utf8") as out:
            for line in [note, *results, summary]:
                out.write(json.dumps(line) + "\n")


def run_local(text: Path, model: str, threads: int, gpu: bool) -> Dict[str, float]:
    """The local engine's code path (`spacy_elmo/embed/local.py`), timed."""
    from spacy_elmo.embed.hdf5_file import write_embedding_file
    from spacy_elmo.layers.elmo_model import ElmoModelSettings
    from spacy_elmo.embed.lines import LineEmbedder
    from spacy_elmo.embed.local import embedded_lines, read_lines as read_text
    from spacy_elmo.embed.settings import EmbedSettings
    from spacy_elmo.runtime import set_threads

    set_threads(threads)
    start = time.perf_counter()
    texts = read_text(text)
    settings = ElmoModelSettings(bilm=model, **(GPU_SETTINGS if gpu else {}))
    embedder = LineEmbedder(EmbedSettings(model=settings))
    times: List[float] = []
    tokens = [0]

    def timed():
        for line, layers in embedded_lines(embedder, texts, settings.batch_size):
            times.append(time.perf_counter())
            tokens[0] += layers.shape[1]
            yield line, layers

    with tempfile.TemporaryDirectory() as folder:
        write_embedding_file(Path(folder) / "out.hdf5", timed())
    end = time.perf_counter()
    first_block = min(settings.batch_size, len(texts))
    result = figures(len(texts), tokens[0], (start, times[first_block - 1], end, end), first_block, memory_bytes("VmHWM"), [])
    return {**result, "cpu_seconds": round(cpu_seconds(os.getpid()), 1)}


def run_ray(text: Path, model: str, workers: int, gpu: bool) -> Dict[str, float]:
    """`embed --engine ray` (`embed_files`), timed from before Ray starts."""
    from spacy_elmo.layers.elmo_model import ElmoModelSettings
    from spacy_elmo.ray_data import EmbedSettings, embed_files

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out"
        first: Dict[str, float] = {}
        last: Dict[str, float] = {}
        peaks: Dict[int, int] = {}
        cpu: Dict[int, float] = {}
        done = threading.Event()

        def watch():
            while not done.is_set():
                # Rows are out once their file's footer is written.
                written = sum(rows_in(f) for f in out.glob("*.parquet")) if out.is_dir() else 0
                if written and not first:
                    first.update(time=time.perf_counter(), rows=written)
                if written > last.get("rows", 0):
                    last.update(time=time.perf_counter(), rows=written)
                for pid in map_workers():
                    peaks[pid] = max(peaks.get(pid, 0), peak_memory(pid))
                    cpu[pid] = max(cpu.get(pid, 0.0), cpu_seconds(pid))
                time.sleep(0.05)

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            settings = EmbedSettings(model=ElmoModelSettings(bilm=model, **({"compute_dtype": GPU_SETTINGS["compute_dtype"]} if gpu else {})))
            summary = embed_files([str(text)], str(out), settings, workers=workers, cpus_per_worker=1, gpus_per_worker=1 if gpu else 0)
        finally:
            done.set()
            watcher.join()
        end = time.perf_counter()
    first = first or {"time": end, "rows": 0}  # every file appeared between two looks
    last_time = last["time"] if last.get("rows") == summary["rows"] else end
    times = (start, first["time"], last_time, end)
    result = figures(summary["rows"], summary["tokens"], times, int(first["rows"]), memory_bytes("VmHWM"), sorted(peaks.values()))
    return {**result, "worker_cpu_seconds": [round(cpu[pid], 1) for pid in sorted(cpu)]}


def figures(rows: int, tokens: int, times: Tuple[float, float, float, float], first_rows: int, driver_peak: int, worker_peaks: List[int]) -> Dict[str, float]:
    """The figures of a run; times: its start, its first rows out, its last rows out, its end
    (for ray: after Ray's shutdown). Steady: the rows after the first ones, over the time between."""
    start, first, last, end = times
    steady = last - first if rows > first_rows else None  # None: every row came in the first block
    return {
        "rows": rows,
        "tokens": tokens,
        "seconds": round(end - start, 2),
        "rows_per_second": round(rows / (end - start), 2),
        "tokens_per_second": round(tokens / (end - start), 1),
        "first_row_seconds": round(first - start, 2),
        "last_row_seconds": round(last - start, 2),
        "steady_rows_per_second": round((rows - first_rows) / steady, 2) if steady else None,
        "steady_tokens_per_second": round(tokens * (rows - first_rows) / rows / steady, 1) if steady else None,
        "driver_peak_mib": round(driver_peak / 2**20),
        "worker_peak_mib": [round(peak / 2**20) for peak in worker_peaks],
    }


def compare(results: List[Dict]) -> Dict[str, object]:
    """The two targets: ray x1 within 15% of local x1 at steady state; ray x2 >= 1.7x ray x1."""
    by = {(r["engine"], r.get("threads", r.get("workers"))): r["steady_rows_per_second"] for r in results}
    if not all(by.values()):
        return {"note": "too few lines for a steady state (every row in the first block): use more --lines"}
    ray_vs_local = by[("ray", 1)] / by[("local", 1)]
    scaling = by[("ray", 2)] / by[("ray", 1)]
    return {
        "ray1_over_local1_steady": round(ray_vs_local, 3),
        "ray1_within_15_percent": ray_vs_local >= 0.85,
        "ray2_over_ray1_steady": round(scaling, 3),
        "ray2_at_least_1_7x": scaling >= 1.7,
    }


def map_workers() -> List[int]:
    """The Ray Data actor processes (Ray names them MapWorker) under this process."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and b"MapWorker" in _read(f"/proc/{entry}/cmdline") and _under_us(int(entry)):
            pids.append(int(entry))
    return pids


def peak_memory(pid: int) -> int:
    for line in _read(f"/proc/{pid}/status").decode(errors="replace").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/PID/stat), to show how much CPU it got."""
    fields = _read(f"/proc/{pid}/stat").rsplit(b")", 1)[-1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") if len(fields) > 12 else 0.0


def rows_in(path: Path) -> int:
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).metadata.num_rows
    except Exception:  # noqa: BLE001  (a file still being written)
        return 0


def cpu_name() -> str:
    for line in _read("/proc/cpuinfo").decode(errors="replace").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def _under_us(pid: int) -> bool:
    while pid > 1:
        fields = _read(f"/proc/{pid}/stat").rsplit(b")", 1)[-1].split()
        if len(fields) < 2 or fields[0] == b"Z":
            return False
        pid = int(fields[1])
        if pid == os.getpid():
            return True
    return False


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


if __name__ == "__main__":
    app()
