"""Words/second and peak memory of `nlp.pipe` with ELMo beside a transformer in spaCy, on the same
texts and threads: what adding each costs a pipeline on a CPU.

Systems (each alone in a blank English pipeline, each in its own process so that its peak memory
is its own): `elmo-en_base` (the bundled biLM), `elmo-original` (the published ELMo architecture,
random weights, as bilm_speed.py writes them), `roberta-base` and `distilroberta` (a
spacy-curated-transformers RoBERTa encoder of those sizes, random weights: 12 or 6 layers of
width 768, 12 heads, 3,072 inner width, strided 128-piece windows), with a byte-level BPE
vocabulary of 50,265 pieces built here with `tokenizers` from the first `--bpe-lines` lines of
`--bpe-corpus`. Speed and memory do not depend on the weight values, so random weights measure
them exactly; quality would need pretrained weights. Each system runs in float32 and bfloat16 (the
ELMo component's dtype; torch.autocast for the transformer). After an untimed warm-up on the
first 64 lines, passes are interleaved: every repeat runs each system once over all the lines
(the biLM's token cache cleared first), and the fastest pass counts.
One JSON line per system and dtype goes to `--output`, with the CPU model and its bf16 flags.

Needs spacy-curated-transformers and tokenizers (a separate environment, see docs/vs_transformer.md):

    .venv-bench/bin/python benchmarks/vs_transformer.py run --corpus corpus/lm/heldout.txt.gz --lines 1000 \\
        --bpe-corpus corpus/lm/train.txt.gz --threads 2 --output benchmarks/results/vs_transformer.jsonl
"""
import json
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, List

import typer
from bilm_speed import DEFAULT_CORPUS, memory_bytes, read_lines, write_random_weights

app = typer.Typer(add_completion=False)
SYSTEMS = ("elmo-en_base", "elmo-original", "roberta-base", "distilroberta")
DTYPES = ("float32", "bfloat16")
BPE_VOCAB_SIZE = 50_265  # roberta-base's vocabulary: the same embedding table size
LAYERS = {"roberta-base": 12, "distilroberta": 6}
WARM_UP_LINES = 64  # an untimed pass over these first: torch's first calls are slow


def build_bpe(corpus: Path, n_lines: int, folder: Path) -> int:
    """A byte-level BPE vocabulary (vocab.json, merges.txt) learned from the first `n_lines` of
    `corpus`, with RoBERTa's special pieces first; its size."""
    from tokenizers import ByteLevelBPETokenizer

    tokenizer = ByteLevelBPETokenizer()
    tokenizer.train_from_iterator(read_lines(corpus, n_lines), vocab_size=BPE_VOCAB_SIZE,
                                  special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])  # fmt: skip
    tokenizer.save_model(str(folder))
    return tokenizer.get_vocab_size()


def transformer_config(system: str, bpe_folder: Path) -> str:
    """A spaCy config with one curated_transformer component of the size of `system`."""
    return f"""
[nlp]
lang = "en"
pipeline = ["transformer"]

[components]

[components.transformer]
factory = "curated_transformer"

[components.transformer.model]
@architectures = "spacy-curated-transformers.RobertaTransformer.v1"
vocab_size = {BPE_VOCAB_SIZE}
num_hidden_layers = {LAYERS[system]}
hidden_width = 768
intermediate_width = 3072
num_attention_heads = 12
piece_encoder = {{"@architectures": "spacy-curated-transformers.ByteBpeEncoder.v1"}}
with_spans = {{"@architectures": "spacy-curated-transformers.WithStridedSpans.v1", "stride": 96, "window": 128}}

[initialize]

[initialize.components]

[initialize.components.transformer]

[initialize.components.transformer.piecer_loader]
@model_loaders = "spacy-curated-transformers.ByteBpeLoader.v1"
vocab_path = "{bpe_folder / 'vocab.json'}"
merges_path = "{bpe_folder / 'merges.txt'}"
"""


def parameters(nlp) -> int:
    """Parameters of the pipeline's torch modules (the biLM, or the transformer encoder)."""
    component = nlp.get_pipe(nlp.pipe_names[0])
    if hasattr(component, "bilm"):
        return sum(p.numel() for p in component.bilm.parameters())
    return sum(p.numel() for node in component.model.walk() for shim in node.shims for p in shim._model.parameters())


def load_system(system: str, dtype: str, bpe_folder: Path, tmp: Path):
    """The pipeline of `system`, initialized, and a function that runs before each pass."""
    import spacy

    if system.startswith("elmo"):
        nlp = spacy.blank("en")
        block = {"compute_dtype": dtype}
        if system == "elmo-en_base":
            block["bilm"] = "en_base"
        else:
            write_random_weights("original", tmp)
            block.update(bilm=str(tmp / "weights.hdf5"), options=str(tmp / "options.json"))
        elmo = nlp.add_pipe("elmo", config={"model": block})
        nlp.initialize()
        return nlp, elmo.bilm.token_cache.clear
    config = spacy.util.load_config_from_str(transformer_config(system, bpe_folder))
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    nlp.initialize()
    return nlp, lambda: None


@app.command()
def worker(
    system: str,
    dtype: str,
    texts_file: Path,
    bpe_folder: Path,
    threads: int,
    pipe_batch_size: int,
) -> None:
    """One system in this process: load it, then answer each "run" line on stdin with one timed
    pass over the texts as a JSON line on stdout; "done" answers with the memory figures."""
    import torch

    torch.set_num_threads(threads)
    texts = json.loads(texts_file.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        nlp, before = load_system(system, dtype, bpe_folder, Path(tmp))
    loaded = memory_bytes("VmRSS")
    autocast = not system.startswith("elmo") and dtype == "bfloat16"

    def one_pass(batch: List[str]) -> float:
        before()
        start = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            docs = list(nlp.pipe(batch, batch_size=pipe_batch_size))
        seconds = time.perf_counter() - start
        assert len(docs) == len(batch)
        return seconds

    one_pass(texts[:WARM_UP_LINES])
    print(json.dumps({"ready": True, "parameters": parameters(nlp)}), flush=True)
    for line in sys.stdin:
        if line.strip() == "run":
            print(json.dumps({"seconds": one_pass(texts)}), flush=True)
        else:
            break
    print(json.dumps({"loaded_mb": round(loaded / 2**20, 1), "peak_mb": round(memory_bytes("VmHWM") / 2**20, 1)}), flush=True)


def cpu_facts() -> Dict[str, object]:
    """The CPU model and whether it multiplies bfloat16 natively (AVX512-BF16, AMX)."""
    info = Path("/proc/cpuinfo").read_text()
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "unknown")
    flags = next((line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("flags")), [])
    return {"cpu": model, "cores": info.count("processor\t:"), "avx512_bf16": "avx512_bf16" in flags, "amx_bf16": "amx_bf16" in flags}


@app.command()
def run(
    corpus: Path = typer.Option(DEFAULT_CORPUS, help="texts, a line each (.txt or .gz); default: the 200-line smoke sample"),
    lines: int = typer.Option(1000, help="how many lines of --corpus to process"),
    bpe_corpus: Path = typer.Option(DEFAULT_CORPUS, help="text to learn the BPE vocabulary from"),
    bpe_lines: int = typer.Option(200_000, help="lines of --bpe-corpus to learn it from"),
    systems: str = typer.Option(",".join(SYSTEMS), help="comma-separated systems"),
    dtypes: str = typer.Option(",".join(DTYPES), help="comma-separated dtypes"),
    threads: int = typer.Option(2, help="torch threads of every system"),
    pipe_batch_size: int = typer.Option(128, help="docs per nlp.pipe batch, the same for every system"),
    repeats: int = typer.Option(3, help="interleaved timed passes per system; the fastest counts"),
    output: Path = typer.Option(Path("benchmarks/results/vs_transformer.jsonl"), help="JSON lines to append to"),
    note: str = typer.Option("", help="a note for the first line written (e.g. what else ran on the machine)"),
) -> None:
    """Run every system and dtype in its own worker, interleaved, and append the figures."""
    import spacy

    texts = read_lines(corpus, lines)
    n_words = sum(1 for doc in spacy.blank("en").tokenizer.pipe(texts) for token in doc if not token.is_space)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "texts.json").write_text(json.dumps(texts))
        start = time.perf_counter()
        bpe_size = build_bpe(bpe_corpus, bpe_lines, folder)
        print(f"BPE vocabulary: {bpe_size:,} pieces from {bpe_lines:,} lines of {bpe_corpus} ({time.perf_counter() - start:.0f} s)", flush=True)
        workers: Dict[str, subprocess.Popen] = {}
        n_params: Dict[str, int] = {}
        for system in systems.split(","):
            for dtype in dtypes.split(","):
                command = [sys.executable, __file__, "worker", system, dtype, str(folder / "texts.json"), str(folder), str(threads), str(pipe_batch_size)]
                workers[f"{system}/{dtype}"] = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                # one loads (and warms up) at a time, so that loading does not share the cores
                answer = workers[f"{system}/{dtype}"].stdout.readline()
                if not answer:
                    raise SystemExit(f"error: worker {system}/{dtype} did not start")
                n_params[f"{system}/{dtype}"] = json.loads(answer)["parameters"]
        seconds: Dict[str, List[float]] = {name: [] for name in workers}
        for repeat in range(repeats):
            for name, process in workers.items():
                process.stdin.write("run\n")
                process.stdin.flush()
                seconds[name].append(json.loads(process.stdout.readline())["seconds"])
                print(f"repeat {repeat}: {name} {seconds[name][-1]:.2f} s", flush=True)
        records = []
        for name, process in workers.items():
            process.stdin.write("done\n")
            process.stdin.flush()
            memory = json.loads(process.stdout.readline())
            process.wait()
            system, dtype = name.split("/")
            best = min(seconds[name])
            records.append({"system": system, "dtype": dtype, "words_per_second": round(n_words / best, 1), "seconds": [round(s, 3) for s in seconds[name]],
                            **memory, "parameters": n_params[name], "lines": len(texts), "words": n_words, "corpus": str(corpus), "threads": threads,
                            "pipe_batch_size": pipe_batch_size, "bpe_pieces": bpe_size, "date": started})  # fmt: skip
    import torch

    facts = {**cpu_facts(), "torch": torch.__version__, "spacy": spacy.__version__,
             "load_average_before": load_before, "load_average_after": Path("/proc/loadavg").read_text().split()[:3]}  # fmt: skip
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("a", encoding="utf8") as file:
        file.write(json.dumps({"note": note, **facts, "date": started}) + "\n")
        for record in records:
            file.write(json.dumps(record) + "\n")
    print(f"{'system':<16} {'dtype':<9} {'words/s':>9} {'loaded MB':>10} {'peak MB':>9}")
    for r in records:
        print(f"{r['system']:<16} {r['dtype']:<9} {r['words_per_second']:>9.1f} {r['loaded_mb']:>10.1f} {r['peak_mb']:>9.1f}")


if __name__ == "__main__":
    app()
