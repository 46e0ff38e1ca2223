"""The pipeline comparison table: mean ± sd over seeds of every variant's test scores, in spaCy's
metric names, from the JSON files of scripts/evaluate_pipeline.py.

    python scripts/pipeline_table.py metrics/pipeline docs/results/pipeline.md --variants elmo,cnn,cnn-vectors
"""
import json
import statistics
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import typer

VARIANT_NAMES = {"cnn": "CNN (en_core_web_sm recipe)", "cnn-vectors": "CNN + floret vectors", "elmo": "ELMo en_base_v2", "elmo-int8": "ELMo int8"}
# (row name, score key, scale): accuracies and F-scores in percent.
ROWS = (
    ("TAG (XPOS)", "tag_acc"),
    ("POS (UPOS)", "pos_acc"),
    ("MORPH (UFeats)", "morph_acc"),
    ("LEMMA", "lemma_acc"),
    ("UAS (CoNLL 2018)", "dep_uas_conll18"),
    ("LAS (CoNLL 2018)", "dep_las_conll18"),
    ("UAS (spaCy)", "dep_uas"),
    ("LAS (spaCy)", "dep_las"),
    ("SENTS_F", "sents_f"),
    ("ENTS_F", "ents_f"),
    ("ENTS_F PER", "ents_per_type.PER.f"),
    ("ENTS_F LOC", "ents_per_type.LOC.f"),
    ("ENTS_F ORG", "ents_per_type.ORG.f"),
)


def score(scores: dict, key: str) -> Optional[float]:
    """A score by dotted key, in percent; None where the pipeline has no such score."""
    value = scores
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return None if value is None else 100 * float(value)


def mean_sd(values: Sequence[float]) -> str:
    """`mean ± sd` (sample sd) with two decimals; a single value alone."""
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"


def table(records: Dict[str, dict], gains: Sequence[Tuple[str, str]] = ()) -> List[str]:
    """Markdown rows: one per score, one column per variant (seeds named), and a column per gain
    (A, B): mean(A) − mean(B)."""
    names = list(records)
    header = ["score", *(f"{VARIANT_NAMES.get(n, n)} (seeds {','.join(str(r['seed']) for r in records[n]['runs'])})" for n in names)]
    header.extend(f"{a} − {b}" for a, b in gains)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, key in ROWS:
        values = {n: [v for v in (score(r["scores"], key) for r in records[n]["runs"]) if v is not None] for n in names}
        if not any(values.values()):
            continue
        cells = [label, *(mean_sd(values[n]) for n in names)]
        for a, b in gains:
            cells.append(f"{statistics.mean(values[a]) - statistics.mean(values[b]):+.2f}" if values[a] and values[b] else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(
    metrics_dir: Path = typer.Argument(..., help="Folder of VARIANT.json files from evaluate_pipeline.py"),
    output: Path = typer.Argument(..., help="Markdown file to write"),
    variants: str = typer.Option("elmo,cnn,cnn-vectors", help="Comma-separated variants, in column order (missing files are left out)"),
    gain: List[str] = typer.Option(["elmo,cnn", "elmo,cnn-vectors"], help="A gain column, A,B: mean(A) − mean(B) (repeat the option for more; a pair with a missing variant is left out)"),
) -> None:
    """Write the comparison table as markdown and print it."""
    records = {name: json.loads(path.read_text(encoding="utf8")) for name in variants.split(",") if (path := metrics_dir / f"{name}.json").is_file()}
    if not records:
        raise SystemExit(f"error: no {variants} .json files in {metrics_dir}")
    pairs = [(a, b) for a, b in (pair.split(",") for pair in gain) if a in records and b in records]
    text = "\n".join(table(records, pairs)) + "\n"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf8")
    print(text, end="")


if __name__ == "__main__":
    typer.run(main)
