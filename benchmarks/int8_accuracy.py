"""How far int8 vectors are from float32: per layer, relative error and cosine over held-out lines.

For each model, the same lines are embedded by the float32 and the int8 biLM (`embed_sentences`,
stateless, batches of 64, spaCy tokens); per output layer it reports, over every token,

- relative error: ‖int8 − float32‖ / ‖float32‖ (Frobenius, all tokens together);
- cosine: of each token's int8 vector with its float32 vector: mean, 1st percentile and minimum.

`en_base` has trained weights; `original` (the published architecture's size) has random
weights (bilm-tf's initialisation): its figures show the error of the products at that size,
not of the published model's trained weights.

    python benchmarks/int8_accuracy.py --corpus ../shared/data/corpus/heldout.txt.gz --sentences 1000
"""
import json
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import typer
from bilm_speed import DEFAULT_CORPUS, read_sentences
from int8_speed import load, machine

ROOT = Path(__file__).resolve().parents[1]
TARGET_COSINE = 0.99

app = typer.Typer(add_completion=False)


def compare(expected: List[np.ndarray], actual: List[np.ndarray]) -> List[Dict[str, float]]:
    """Per layer: relative error and per-token cosines of `actual` against `expected`."""
    x = np.concatenate(expected, axis=1).astype(np.float64)  # (layers, tokens, width)
    y = np.concatenate(actual, axis=1).astype(np.float64)
    rows = []
    for layer in range(x.shape[0]):
        a, b = x[layer], y[layer]
        cosines = (a * b).sum(-1) / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1), 1e-30)
        rows.append({
            "layer": layer,
            "relative_error": float(np.linalg.norm(a - b) / np.linalg.norm(a)),
            "cosine_mean": float(cosines.mean()),
            "cosine_p01": float(np.percentile(cosines, 1)),
            "cosine_min": float(cosines.min()),
            "tokens_below_target": int((cosines < TARGET_COSINE).sum()),
            "tokens": int(len(cosines)),
            "max_abs_difference": float(np.abs(a - b).max()),
        })
    return rows


@app.command()
def main(
    models: str = typer.Option("en_base,original", help="comma-separated: bundled names, folders, or small/medium/original (random weights)"),
    sentences: int = typer.Option(1000, help="corpus lines"),
    original_sentences: int = typer.Option(0, help="lines for small/medium/original (0: --sentences)"),
    corpus: Path = typer.Option(DEFAULT_CORPUS, help="text, a sentence a line (.txt or .gz)"),
    threads: int = typer.Option(1, help="torch threads"),
    output: Path = typer.Option(ROOT / "benchmarks" / "results" / "int8_accuracy.json", help="JSON written here"),
) -> None:
    import torch

    torch.set_num_threads(threads)
    results: List[Dict[str, Any]] = []
    for model in models.split(","):
        n = original_sentences if model in ("small", "medium", "original") and original_sentences else sentences
        texts = read_sentences(corpus, n)
        expected = load(model, "float32").embed_sentences(texts)
        actual = load(model, "int8").embed_sentences(texts)
        for row in compare(expected, actual):
            row.update(model=model, lines=len(texts))
            results.append(row)
            print(f"{model:>9} layer {row['layer']}: relative error {row['relative_error']:.4f}  cosine mean {row['cosine_mean']:.5f}  "
                  f"1st percentile {row['cosine_p01']:.5f}  min {row['cosine_min']:.5f}  "
                  f"tokens below {TARGET_COSINE}: {row['tokens_below_target']} of {row['tokens']}", flush=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"machine": machine(), "corpus": corpus.name, "results": results}, indent=1) + "\n")
    print(f"written: {output}")


if __name__ == "__main__":
    app()
