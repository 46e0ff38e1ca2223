"""Score one trained pipeline (all its components, spaCy's scores) on a test set four ways: its
ELMo features from torch float32 (the reference), torch int8, ONNX Runtime float32 and ONNX
Runtime int8. Only the `elmo` component changes: on torch, its model block's compute dtype is
overridden when the pipeline is loaded; for ONNX Runtime, `set-runtime` writes a copy into a
temporary folder. The components were trained on float32 features; the issue's bar is a drop of
at most 0.3 points of F1 (or accuracy).

    python scripts/evaluate_runtimes.py training/ner-elmo/seed0/model-best corpus/ner/test.spacy metrics/ner-elmo-runtimes.json

Writes one JSON file: {"pipeline", "test", "threads", "trained": {component: "runtime dtype"},
"scores": {variant: {score: value, "speed": words/s}}, "differences": {variant: {score: variant −
reference}}, "max_drop_points", "largest_drop_points": {variant: points}, "within_max_drop":
{variant: bool}}; scores are fractions (0–1), drops are in points (100×); the table is printed too.
Run it on an otherwise idle CPU: the speeds are spaCy's words/s of each evaluation.
"""
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Tuple

import spacy
import typer
from spacy.language import Language
from spacy.training import Corpus

REFERENCE = ("torch", "float32")
VARIANTS: List[Tuple[str, str]] = [REFERENCE, ("torch", "int8"), ("onnxruntime", "float32"), ("onnxruntime", "int8")]
SCORES = ("ents_p", "ents_r", "ents_f", "tag_acc", "pos_acc", "morph_acc", "dep_uas", "dep_las", "lemma_acc")
# The scores compared with the reference, where the pipeline has them.
COMPARED = ("ents_f", "tag_acc", "pos_acc", "morph_acc", "dep_las", "lemma_acc")
MAX_DROP_POINTS = 0.3


def label(runtime: str, dtype: str) -> str:
    return f"{runtime} {dtype}"


def load_variant(pipeline: Path, runtime: str, dtype: str, scratch: Path) -> Language:
    """The pipeline with its elmo components on `runtime` in `dtype`, on the CPU."""
    from spacy_elmo.pipeline.runtime_switch import elmo_states, set_runtime

    states = elmo_states(pipeline)
    if runtime == "torch" and all(state.runtime == "torch" for state in states):
        overrides: Dict[str, Any] = {}
        for state in states:
            overrides[f"components.{state.name}.model.{state.dtype_key}"] = dtype
            overrides[f"components.{state.name}.model.device"] = "cpu"
        return spacy.load(pipeline, config=overrides)
    copy = scratch / f"{runtime}-{dtype}"
    set_runtime(pipeline, copy, runtime, dtype, force=True)
    return spacy.load(copy)


def score(nlp: Language, test_data: Path) -> Dict[str, float]:
    """spaCy's scores of the pipeline on the test set (those of SCORES it has), and its words/s."""
    scores = nlp.evaluate(list(Corpus(test_data)(nlp)))
    kept = {key: float(scores[key]) for key in SCORES if scores.get(key) is not None}
    kept["speed"] = float(scores["speed"])
    return kept


def compare(scores: Dict[str, Dict[str, float]], max_drop: float = MAX_DROP_POINTS) -> Dict[str, Any]:
    """Each variant's differences from the reference, its largest drop in points, and whether
    that is within `max_drop` points."""
    reference = scores[label(*REFERENCE)]
    differences: Dict[str, Dict[str, float]] = {}
    drops: Dict[str, float] = {}
    for variant, got in scores.items():
        if variant == label(*REFERENCE):
            continue
        differences[variant] = {key: got[key] - reference[key] for key in COMPARED if key in got and key in reference}
        drops[variant] = max([0.0] + [-100 * d for d in differences[variant].values()])
    return {
        "differences": differences,
        "max_drop_points": max_drop,
        "largest_drop_points": drops,
        "within_max_drop": {variant: drop <= max_drop + 1e-9 for variant, drop in drops.items()},
    }


def evaluate_runtimes(pipeline: Path, test_data: Path, threads: int = 1, max_drop: float = MAX_DROP_POINTS) -> Dict[str, Any]:
    """The record the script writes (see the module)."""
    from spacy_elmo.pipeline.runtime_switch import elmo_states
    from spacy_elmo.runtime import set_threads

    os.environ["OMP_NUM_THREADS"] = str(threads)  # ONNX Runtime's threads (`onnx_threads`)
    set_threads(threads)
    trained = {state.name: state.label for state in elmo_states(pipeline)}
    scores: Dict[str, Dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="evaluate-runtimes-") as scratch:
        for runtime, dtype in VARIANTS:
            scores[label(runtime, dtype)] = score(load_variant(pipeline, runtime, dtype, Path(scratch)), test_data)
            print(json.dumps({label(runtime, dtype): scores[label(runtime, dtype)]}), flush=True)
    record = {"pipeline": str(pipeline), "test": str(test_data), "threads": threads, "trained": trained, "scores": scores}
    record.update(compare(scores, max_drop))
    return record


def table(record: Dict[str, Any]) -> str:
    """The scores (in points) and the differences from the reference, one line per variant."""
    keys = [key for key in COMPARED if key in record["scores"][label(*REFERENCE)]]
    lines = [f"{'':22}" + "".join(f"{key:>17}" for key in keys) + f"{'words/s':>10}  largest drop"]
    for variant, scores in record["scores"].items():
        differences = record["differences"].get(variant, {})
        cells = "".join(
            f"{100 * scores[key]:>9.2f}" + (f" ({100 * differences[key]:+.2f})" if key in differences else " " * 8) for key in keys
        )
        drop = record["largest_drop_points"].get(variant)
        verdict = "" if drop is None else f"  {drop:.2f}" + ("" if record["within_max_drop"][variant] else f" > {record['max_drop_points']}")
        lines.append(f"{variant:22}{cells}{scores['speed']:>10.0f}{verdict}")
    return "\n".join(lines)


def main(
    pipeline: Path = typer.Argument(..., help="A trained pipeline with an elmo component (e.g. training/ner-elmo/seed0/model-best)"),
    test_data: Path = typer.Argument(..., help="Test set (.spacy)"),
    output: Path = typer.Argument(..., help="JSON file to write"),
    threads: int = typer.Option(1, help="torch's and ONNX Runtime's threads"),
    max_drop: float = typer.Option(MAX_DROP_POINTS, help="the largest drop from torch float32 that passes, in points"),
) -> None:
    record = evaluate_runtimes(pipeline, test_data, threads, max_drop)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(record, indent=2) + "\n")
    print(table(record))


if __name__ == "__main__":
    typer.run(main)
