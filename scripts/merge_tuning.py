"""Merge the results of scripts/tune_config.py run one grid combination at a time (so that a long
tuning can stop and resume between runs) into one ranked file, as one tune_config.py run over the
whole grid writes it, and print the best setting as `spacy train` overrides.

    python scripts/merge_tuning.py docs/results/tune/ner-baseline-vectors.json \\
        docs/results/tune/ner-baseline-vectors/*.json
    # prints e.g.: --training.dropout 0.1 --components.ner.model.tok2vec.encode.depth 4
"""

import json
from pathlib import Path
from typing import Dict, List

import typer


def merge(parts: List[dict]) -> dict:
    """One record: the config, every value of each grid key, and all runs, best first."""
    configs = {part["config"] for part in parts}
    if len(configs) != 1:
        raise SystemExit(f"error: the parts tune different configs: {', '.join(sorted(configs))}")
    grid: Dict[str, List[str]] = {}
    for part in parts:
        for key, values in part["grid"].items():
            grid.setdefault(key, [])
            grid[key] += [value for value in values if value not in grid[key]]
    runs = sorted((run for part in parts for run in part["runs"]), key=lambda run: -run["value"])
    return {"config": configs.pop(), "grid": {key: sorted(values) for key, values in grid.items()}, "runs": runs}


def main(
    output: Path = typer.Argument(..., help="The merged JSON file to write"),
    parts: List[Path] = typer.Argument(..., help="JSON files of scripts/tune_config.py, one combination each"),
) -> None:
    """Write the merged ranking and print the best setting as overrides."""
    merged = merge([json.loads(path.read_text()) for path in parts])
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(merged, indent=2))
    print(" ".join(f"--{key} {value}" for key, value in merged["runs"][0]["setting"].items()))


if __name__ == "__main__":
    typer.run(main)
