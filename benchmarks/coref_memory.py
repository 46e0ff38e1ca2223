"""Peak memory of a coreference pipeline on long documents (the `coref` extra).

Each pipeline runs in a fresh process: it is loaded, then given documents of increasing length
(the GUM documents closest to each target length, joined when one is too short); the peak
resident memory (`ru_maxrss`) is read after each, so each figure is the peak up to and including
that length. The figures are the peak over the loaded pipeline's own footprint.

    python benchmarks/coref_memory.py training/coref-elmo/seed0/model-best \\
        training/coref-baseline/seed0/model-best --docs corpus/coref/train.spacy --threads 1

It needs the `coref` extra, trained pipelines and GUM documents (`spacy project run coref-smoke`
makes small ones under smoke/coref/).
"""
import json
import subprocess
import sys
from pathlib import Path
from typing import List

import typer

app = typer.Typer(add_completion=False)

CHILD = r"""
import json, resource, sys, time
import spacy
from spacy.tokens import DocBin

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

model, docs_path, lengths, threads = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
if threads:
    import torch
    torch.set_num_threads(threads)
nlp = spacy.load(model)
nlp("Warm up: the pipeline runs once before measuring. It is short.")
docs = sorted(DocBin().from_disk(docs_path).get_docs(nlp.vocab), key=len, reverse=True)
loaded = peak_mb()
rows = []
for target in lengths:
    text, n = [], 0
    for doc in docs:
        if n >= target:
            break
        text.append(doc.text)
        n += len(doc)
    start = time.perf_counter()
    out = nlp(" ".join(text))
    rows.append({"tokens": len(out), "seconds": round(time.perf_counter() - start, 2),
                 "clusters": sum(1 for k in out.spans if k.startswith("coref_clusters_")),
                 "peak_mb": round(peak_mb(), 1), "over_loaded_mb": round(peak_mb() - loaded, 1)})
print(json.dumps({"loaded_mb": round(loaded, 1), "rows": rows}))
"""


@app.command()
def main(
    models: List[Path] = typer.Argument(..., help="Trained coreference pipelines"),
    docs: Path = typer.Option(Path("corpus/coref/train.spacy"), help="Documents to take the texts from"),
    lengths: str = typer.Option("1500,3000,6000", help="Document lengths to measure, in tokens (increasing)"),
    output: Path = typer.Option(None, help="JSON lines file to append the results to"),
    threads: int = typer.Option(1, help="torch threads in each pipeline's process (0: torch's default)"),
) -> None:
    """Print, per pipeline, the peak memory for each document length."""
    if not docs.is_file():
        raise SystemExit(f"error: no documents at {docs}; `spacy project run convert-coref` (or coref-smoke) writes them")
    targets = json.dumps([int(n) for n in lengths.split(",")])
    for model in models:
        result = subprocess.run([sys.executable, "-c", CHILD, str(model), str(docs), targets, str(threads)], capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"error: {model}: {result.stderr[-2000:]}")
        record = {"model": str(model), **json.loads(result.stdout.strip().splitlines()[-1])}
        print(f"{model}: loaded {record['loaded_mb']} MB")
        for row in record["rows"]:
            print(f"  {row['tokens']:>6,} tokens: peak {row['peak_mb']} MB (+{row['over_loaded_mb']} MB), "
                  f"{row['seconds']} s, {row['clusters']} clusters")
        if output:
            with output.open("a") as handle:
                handle.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    app()
