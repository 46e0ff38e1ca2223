"""The coreference table: systems side by side on one test set, mean ± sd over seeds, each
seed's CoNLL F1, and the gain of the first system over the second on the seeds both have.

    python scripts/coref_table.py metrics/elmo-coref-elmo.json metrics/elmo-coref-cnn.json \\
        --names "elmo_coref + ELMo,elmo_coref (CNN)" --extra docs/results/coref-elmo.json \\
        --extra-names "spacy-experimental + ELMo" --output metrics/elmo-coref.md

Inputs are scripts/evaluate_runs.py's JSON files (scores as fractions; shown in percent). LEA is
`coref_lea_f` (spacy_elmo.coref.scoring), or `coref_f` (spacy-experimental's own) where a file has
only that.
"""
import json
import statistics
from pathlib import Path
from typing import Dict, List, Optional

import typer

ROWS = {
    "CoNLL F1": "coref_conll_f", "MUC P": "coref_muc_p", "MUC R": "coref_muc_r", "MUC F1": "coref_muc_f",
    "B³ P": "coref_b3_p", "B³ R": "coref_b3_r", "B³ F1": "coref_b3_f",
    "CEAFe P": "coref_ceafe_p", "CEAFe R": "coref_ceafe_r", "CEAFe F1": "coref_ceafe_f", "LEA F1": "coref_lea_f",
}  # fmt: skip


def values(runs: List[dict], key: str) -> List[float]:
    """The score `key` of each run (LEA: spacy-experimental's `coref_f` where ours is absent)."""
    if key == "coref_lea_f" and any(key not in run["scores"] for run in runs):
        key = "coref_f"
    return [100 * run["scores"][key] for run in runs]


def cell(numbers: List[float]) -> str:
    return f"{numbers[0]:.2f}" if len(numbers) == 1 else f"{statistics.mean(numbers):.2f} ± {statistics.stdev(numbers):.2f}"


def table(records: Dict[str, dict]) -> str:
    """The markdown table of `records` (column name -> evaluate_runs JSON)."""
    names = list(records)
    first, second = names[0], names[1]
    paired = sorted({r["seed"] for r in records[first]["runs"]} & {r["seed"] for r in records[second]["runs"]})
    lines = [f"| | {' | '.join(names)} | {first} − {second} |", "|---" * (len(names) + 2) + "|"]
    for row, key in ROWS.items():
        cells = [cell(values(records[name]["runs"], key)) for name in names]
        by_seed = {name: {r["seed"]: v for r, v in zip(records[name]["runs"], values(records[name]["runs"], key))} for name in (first, second)}
        gain = statistics.mean(by_seed[first][s] - by_seed[second][s] for s in paired) if paired else None
        lines.append(f"| {row} | {' | '.join(cells)} | {'' if gain is None else f'{gain:+.2f}'} |")
    seeds = "; ".join(
        f"{name}: " + ", ".join(f"seed {r['seed']} {v:.2f}" for r, v in zip(records[name]["runs"], values(records[name]["runs"], "coref_conll_f")))
        for name in names
    )
    return "\n".join(lines) + f"\n\nCoNLL F1 per seed: {seeds}. Test set: {records[first]['test']}.\n"


def main(
    first: Path = typer.Argument(..., help="evaluate_runs JSON of the system compared"),
    second: Path = typer.Argument(..., help="evaluate_runs JSON of its baseline"),
    names: str = typer.Option("system,baseline", help="Comma-separated column names of FIRST and SECOND"),
    extra: Optional[List[Path]] = typer.Option(None, help="More JSON files shown beside them"),
    extra_names: str = typer.Option("", help="Comma-separated column names of the --extra files"),
    output: Optional[Path] = typer.Option(None, help="Markdown file to write (else printed only)"),
) -> None:
    """Print (and write) the table."""
    paths = [first, second, *(extra or [])]
    labels = names.split(",") + [name for name in extra_names.split(",") if name]
    if len(labels) != len(paths):
        raise SystemExit(f"error: {len(paths)} JSON files but {len(labels)} names")
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise SystemExit(f"error: no such file: {', '.join(missing)} (scripts/evaluate_runs.py writes them)")
    text = table({label: json.loads(path.read_text()) for label, path in zip(labels, paths)})
    print(text)
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf8")


if __name__ == "__main__":
    typer.run(main)
