"""Score every seed of a training output on a test set twice: with the ELMo features of the dtype
it was trained with, and with int8 features (the `elmo` component's model block set to
dtype "int8" when the pipeline is loaded; nothing else changes). Writes one JSON file:
{"model", "test", "dtype_override", "runs": [{"seed", "trained_dtype", "scores": {dtype: {...}}}],
"summary": {dtype: {score: {"mean", "sd", "seeds"}}}}, the summary also printed (sd over seeds, n − 1).

    python scripts/evaluate_int8.py training/ner-elmo corpus/ner/test.spacy metrics/ner-elmo-int8.json
    python scripts/evaluate_int8.py training/tagger-elmo corpus/pos/test.spacy metrics/tagger-elmo-int8.json

A model trained on int8 features (`train-*-elmo-int8` in project.yml) is scored with int8 (its
own dtype) and, for comparison, float32.
"""
import json
import statistics
from pathlib import Path
from typing import Any, Dict, List, Optional

import spacy
import typer
from spacy.training import Corpus

SCORES = ("ents_p", "ents_r", "ents_f", "tag_acc")


def dtype_key(model: Path) -> str:
    """The model block's compute-dtype key: `compute_dtype` (ElmoModel.v2), `dtype` (v1)."""
    block = spacy.util.load_config(model / "config.cfg")["components"]["elmo"]["model"]
    return "compute_dtype" if "compute_dtype" in block else "dtype"


def score(model: Path, test_data: Path, dtype: Optional[str], threads: int) -> Dict[str, Any]:
    from spacy_elmo.runtime import set_threads

    set_threads(threads)
    key = dtype_key(model)
    overrides = {} if dtype is None else {f"components.elmo.model.{key}": dtype, "components.elmo.model.device": "cpu"}
    nlp = spacy.load(model, config=overrides)
    scores = nlp.evaluate(list(Corpus(test_data)(nlp)))
    return {key: scores[key] for key in SCORES if scores.get(key) is not None}


def summarize(runs: List[Dict[str, Any]]) -> Dict[str, Dict[str, Dict[str, float]]]:
    """Mean and standard deviation over seeds of each score, per dtype."""
    summary: Dict[str, Dict[str, Dict[str, float]]] = {}
    for dtype in sorted({d for run in runs for d in run["scores"]}):
        for key in SCORES:
            values = [run["scores"][dtype][key] for run in runs if key in run["scores"].get(dtype, {})]
            if values:
                sd = statistics.stdev(values) if len(values) > 1 else 0.0
                summary.setdefault(dtype, {})[key] = {"mean": statistics.fmean(values), "sd": sd, "seeds": len(values)}
    return summary


def main(
    training_dir: Path = typer.Argument(..., help="Folder of seedN/ outputs of scripts/train_seeds.py"),
    test_data: Path = typer.Argument(..., help="Test set (.spacy)"),
    output: Path = typer.Argument(..., help="JSON file to write"),
    other: str = typer.Option("int8", help="the dtype to score with besides the trained one"),
    threads: int = typer.Option(1, help="torch threads"),
) -> None:
    runs = []
    for seed_dir in sorted(training_dir.glob("seed*"), key=lambda p: int(p.name[4:])):
        model = seed_dir / "model-best"
        trained = spacy.util.load_config(model / "config.cfg")["components"]["elmo"]["model"][dtype_key(model)]
        compared = "float32" if trained == other else other
        scores = {trained: score(model, test_data, None, threads), compared: score(model, test_data, compared, threads)}
        runs.append({"seed": int(seed_dir.name[4:]), "trained_dtype": trained, "scores": scores})
        print(json.dumps(runs[-1]), flush=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    summary = summarize(runs)
    for dtype, scores in summary.items():
        shown = ", ".join(f"{key} {100 * v['mean']:.2f} ± {100 * v['sd']:.2f}" for key, v in scores.items())
        print(f"{dtype} features ({len(runs)} seeds): {shown}")
    record = {"model": str(training_dir), "test": str(test_data), "dtype_override": other, "runs": runs, "summary": summary}
    output.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    typer.run(main)
