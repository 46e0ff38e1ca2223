"""Compare baseline and ELMo runs: a markdown table (mean ± standard deviation over seeds) per task
(NER F1 micro and per label, on the full and the low-resource train set; UPOS accuracy;
coreference CoNLL F1 with MUC, B³, CEAFe and LEA), the learned layer weights of each task, and a
PNG chart. Each task is included when both its JSON files (from scripts/evaluate_runs.py) are
in the metrics folder.

    python scripts/compare.py metrics results.md results.png
"""

import json
import statistics
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import typer

# task -> (baseline, ELMo) JSON names, in the order of the table.
PAIRS = {
    "ner": ("ner-baseline", "ner-elmo"),
    "ner-low": ("ner-baseline-low", "ner-elmo-low"),
    "tagger": ("tagger-baseline", "tagger-elmo"),
    "coref": ("coref-baseline", "coref-elmo"),
}
MIX_NAMES = {"ner": "NER", "ner-low": "NER (low-resource)", "tagger": "POS", "coref": "coreference"}
COREF_ROWS = {"CoNLL F1": "coref_conll_f", "MUC F1": "coref_muc_f", "B³ F1": "coref_b3_f",
              "CEAFe F1": "coref_ceafe_f", "LEA F1": "coref_f"}  # fmt: skip

Rows = Dict[str, List[List[float]]]  # row name -> [baseline values per seed, ELMo values per seed]


def mean_sd(values: Sequence[float]) -> str:
    """E.g. "71.23 ± 0.45" (percent; the standard deviation over seeds), or "71.23" for one seed."""
    if len(values) == 1:
        return f"{100 * values[0]:.2f}"
    return f"{100 * statistics.mean(values):.2f} ± {100 * statistics.stdev(values):.2f}"


def ner_rows(baseline: List[dict], elmo: List[dict]) -> Rows:
    """F1 per seed of each variant: micro first, then per label."""
    labels = sorted(baseline[0]["scores"]["ents_per_type"])
    rows = {"micro": [[r["scores"]["ents_f"] for r in runs] for runs in (baseline, elmo)]}
    for label in labels:
        rows[label] = [[r["scores"]["ents_per_type"].get(label, {"f": 0.0})["f"] for r in runs] for runs in (baseline, elmo)]
    return rows


def score_rows(baseline: List[dict], elmo: List[dict], rows: Dict[str, str]) -> Rows:
    """Named scores per seed of each variant."""
    return {name: [[r["scores"][key] for r in runs] for runs in (baseline, elmo)] for name, key in rows.items()}


def mean_mix(runs: List[dict]) -> Dict[str, Any]:
    """Mean layer weights (list) and γ (float) over seeds."""
    mixes = [r["layer_mix"] for r in runs if r["layer_mix"]]
    n_layers = len(mixes[0]["weights"])
    return {
        "weights": [statistics.mean(m["weights"][j] for m in mixes) for j in range(n_layers)],
        "gamma": statistics.mean(m["gamma"] for m in mixes),
    }


def table(title: str, header: str, rows: Rows) -> List[str]:
    lines = [title, "", f"| {header} | baseline | ELMo | gain |", "|---|---:|---:|---:|"]
    for name, (base, elmo) in rows.items():
        gain = 100 * (statistics.mean(elmo) - statistics.mean(base))
        lines.append(f"| {name} | {mean_sd(base)} | {mean_sd(elmo)} | {gain:+.2f} |")
    return lines + [""]


def markdown(tables: List[Tuple[str, str, Rows]], mixes: Dict[str, dict]) -> str:
    lines: List[str] = []
    for title, header, rows in tables:
        lines += table(title, header, rows)
    if mixes:
        n_layers = len(next(iter(mixes.values()))["weights"])
        names = ["token layer"] + [f"LSTM layer {j}" for j in range(1, n_layers)]
        lines += ["Learned ELMo layer weights (softmax-normalized s_j, mean over seeds) and scale γ:", ""]
        lines += ["| task | " + " | ".join(names) + " | γ |", "|---|" + "---:|" * (n_layers + 1)]
        for task, mix in mixes.items():
            lines.append(f"| {task} | " + " | ".join(f"{w:.3f}" for w in mix["weights"]) + f" | {mix['gamma']:.3f} |")
    return "\n".join(lines) + "\n"


def chart(panels: List[Tuple[str, Rows]], mixes: Dict[str, dict], path: Path) -> None:
    """One bar panel per table (baseline vs ELMo, mean ± sd per row) and one of the layer weights."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratios = [max(1, len(rows)) for _, rows in panels] + ([2] if mixes else [])
    fig, axes = plt.subplots(1, len(ratios), figsize=(2.2 + 1.1 * sum(ratios), 4), gridspec_kw={"width_ratios": ratios}, squeeze=False)
    width = 0.38
    for ax, (title, rows) in zip(axes[0], panels):
        names = list(rows)
        for offset, (index, variant) in zip((-width / 2, width / 2), enumerate(("baseline", "ELMo"))):
            means = [100 * statistics.mean(rows[name][index]) for name in names]
            sds = [100 * statistics.stdev(rows[name][index]) if len(rows[name][index]) > 1 else 0 for name in names]
            ax.bar([i + offset for i in range(len(names))], means, width, yerr=sds, label=variant, capsize=3)
        ax.set_xticks(range(len(names)), names, rotation=30 if len(names) > 3 else 0)
        ax.set_title(title)
        ax.legend()
        if len(names) == 1:
            low = min(100 * min(values) for values in rows[names[0]])
            ax.set_ylim(max(0.0, low - 3), 100)
    if mixes:
        ax_mix = axes[0][-1]
        n_layers = len(next(iter(mixes.values()))["weights"])
        step = 0.8 / len(mixes)
        for i, (task, mix) in enumerate(mixes.items()):
            ax_mix.bar([j - 0.4 + step * (i + 0.5) for j in range(n_layers)], mix["weights"], step, label=task)
        ax_mix.set_xticks(range(n_layers), ["token"] + [f"LSTM {j}" for j in range(1, n_layers)])
        ax_mix.set_title("Learned layer weights s_j")
        # Head room above the tallest bar keeps the legend off the bars.
        ax_mix.set_ylim(0, 1.6 * max(max(mix["weights"]) for mix in mixes.values()))
        ax_mix.legend(fontsize="small", loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def read_record(path: Path) -> dict:
    return json.loads(path.read_text())


def paired_runs(baseline: dict, elmo: dict) -> Tuple[List[dict], List[dict], List[int]]:
    """The runs of the seeds both variants have (runs trained one at a time may be ahead in one),
    and those seeds."""
    seeds = sorted({r["seed"] for r in baseline["runs"]} & {r["seed"] for r in elmo["runs"]})
    if not seeds:
        raise SystemExit(f"error: {baseline['model']} and {elmo['model']} have no seed in common")
    runs = tuple([r for r in record["runs"] if r["seed"] in seeds] for record in (baseline, elmo))
    return runs[0], runs[1], seeds


def seeds_summary(seeds: List[int]) -> str:
    """How a table summarizes its seeds: "mean ± sd over 3 seeds (0, 1, 2)", or "seed 0"."""
    return f"mean ± sd over {len(seeds)} seeds ({', '.join(map(str, seeds))})" if len(seeds) > 1 else f"seed {seeds[0]}"


def main(
    metrics_dir: Path = typer.Argument(..., help="Folder with the JSON files of scripts/evaluate_runs.py"),
    output: Path = typer.Argument(..., help="Markdown file to write"),
    chart_path: Path = typer.Argument(..., help="PNG chart to write"),
) -> None:
    """Write the comparison table and chart."""
    records = {
        task: [read_record(metrics_dir / f"{name}.json") for name in names]
        for task, names in PAIRS.items()
        if all((metrics_dir / f"{name}.json").is_file() for name in names)
    }
    if not records:
        raise SystemExit(f"error: {metrics_dir} has no baseline/ELMo pair of results; run the evaluate commands first")
    tables: List[Tuple[str, str, Rows]] = []
    panels: List[Tuple[str, Rows]] = []
    mixes: Dict[str, Dict[str, Any]] = {}
    for task, (baseline, elmo) in records.items():
        baseline_runs, elmo_runs, seeds = paired_runs(baseline, elmo)
        runs = (baseline_runs, elmo_runs)
        over_seeds = seeds_summary(seeds)
        no_spread = "" if len(seeds) > 1 else f"\n({over_seeds}, no spread)"
        mixes[MIX_NAMES[task]] = mean_mix(elmo_runs)
        if task.startswith("ner"):
            n_docs = baseline.get("train_docs")
            training = "the full train set" if task == "ner" else (f"the first {n_docs:,} train sentences" if n_docs else "the low-resource train set")
            tables.append((f"NER F1 on the UNER English-EWT test set, trained on {training}, {over_seeds}:", "entity", ner_rows(*runs)))
            panels.append((f"NER F1, UNER EWT test\n(trained on {training}){no_spread}", tables[-1][2]))
        elif task == "tagger":
            rows = score_rows(*runs, {"accuracy": "tag_acc"})
            tables.append((f"UPOS accuracy on the UD English-EWT test set, {over_seeds}:", "", rows))
            panels.append(("UPOS accuracy" + no_spread, rows))
        else:
            rows = score_rows(*runs, COREF_ROWS)
            tables.append((f"Coreference on the GUM test set (gold tokens, chains of 2+ mentions), {over_seeds}:", "score", rows))
            panels.append(("Coreference F1, GUM test" + no_spread, rows))
    text = markdown(tables, mixes)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf8")
    chart(panels, mixes, chart_path)
    print(text)


if __name__ == "__main__":
    typer.run(main)
