"""Compare the variants of each task: a markdown table (mean ± standard deviation over seeds) per
task (NER F1 micro and per label, on the full train set and the low-resource ones; UPOS accuracy;
coreference CoNLL F1 with MUC, B³, CEAFe and LEA), the learned layer weights, and a PNG chart.

The variants are spaCy's hash embeddings alone (`baseline`), with static vectors
(`baseline-vectors`), with ELMo (`elmo`) and with both (`elmo-vectors`). A task is included when
its baseline and ELMo JSON files (from scripts/evaluate_runs.py) are in the metrics folder; a
vectors variant joins its table once it has every seed the baseline and ELMo have in common
(until then a note says how far it is). Every table pairs the seeds all its variants have.
With --baselines, the baseline variants missing from the metrics folder come from that folder:
a second biLM's ELMo runs against the same baselines. The text names the biLM of the ELMo runs
(the `bilm` of their records).

    python scripts/compare.py metrics results.md results.png
    python scripts/compare.py docs/results/en_base_v2 results.md results.png --baselines docs/results
"""

import json
import statistics
from pathlib import Path
from typing import Annotated, Any, Dict, List, Optional, Sequence, Tuple

import typer

# task -> JSON name pattern, in the order of the tables.
TASKS = {
    "ner": "ner-{}",
    "ner-low": "ner-{}-low",
    "ner-low-random": "ner-{}-low-random",
    "tagger": "tagger-{}",
    "coref": "coref-{}",
}
# variant -> column name, in the order of the columns; baseline and elmo are required.
VARIANTS = {"baseline": "baseline", "baseline-vectors": "baseline + vectors", "elmo": "ELMo", "elmo-vectors": "ELMo + vectors"}
BASELINES = ("baseline", "baseline-vectors")
# (column name, minuend, subtrahend), shown where both variants are.
GAINS = (
    ("ELMo − baseline", "elmo", "baseline"),
    ("ELMo − (baseline + vectors)", "elmo", "baseline-vectors"),
    ("(ELMo + vectors) − (baseline + vectors)", "elmo-vectors", "baseline-vectors"),
)
MIX_NAMES = {"ner": "NER", "ner-low": "NER (first {n:,})", "ner-low-random": "NER (random {n:,})", "tagger": "POS", "coref": "coreference"}
CHART_LINE_WIDTH = 14  # chart panels per line, in units of one bar group
COREF_ROWS = {"CoNLL F1": "coref_conll_f", "MUC F1": "coref_muc_f", "B³ F1": "coref_b3_f",
              "CEAFe F1": "coref_ceafe_f", "LEA F1": "coref_f"}  # fmt: skip

Runs = Dict[str, List[dict]]  # variant -> its runs of the table's seeds
Rows = Dict[str, Dict[str, List[float]]]  # row name -> variant -> values per seed


def mean_sd(values: Sequence[float]) -> str:
    """E.g. "71.23 ± 0.45" (percent; the standard deviation over seeds), or "71.23" for one seed."""
    if len(values) == 1:
        return f"{100 * values[0]:.2f}"
    return f"{100 * statistics.mean(values):.2f} ± {100 * statistics.stdev(values):.2f}"


def ner_rows(runs: Runs) -> Rows:
    """F1 per seed of each variant: micro first, then per label."""
    labels = sorted(runs["baseline"][0]["scores"]["ents_per_type"])
    rows = {"micro": {v: [r["scores"]["ents_f"] for r in vr] for v, vr in runs.items()}}
    for label in labels:
        rows[label] = {v: [r["scores"]["ents_per_type"].get(label, {"f": 0.0})["f"] for r in vr] for v, vr in runs.items()}
    return rows


def score_rows(runs: Runs, names: Dict[str, str]) -> Rows:
    """Named scores per seed of each variant."""
    return {name: {v: [r["scores"][key] for r in vr] for v, vr in runs.items()} for name, key in names.items()}


def mean_mix(runs: List[dict]) -> Dict[str, Any]:
    """Mean layer weights (list) and γ (float) over seeds."""
    mixes = [r["layer_mix"] for r in runs if r["layer_mix"]]
    n_layers = len(mixes[0]["weights"])
    return {
        "weights": [statistics.mean(m["weights"][j] for m in mixes) for j in range(n_layers)],
        "gamma": statistics.mean(m["gamma"] for m in mixes),
    }


def table(title: str, header: str, rows: Rows, notes: Sequence[str] = ()) -> List[str]:
    variants = list(next(iter(rows.values())))
    gains = [(name, a, b) for name, a, b in GAINS if a in variants and b in variants]
    names = [VARIANTS[v] for v in variants] + [name for name, _, _ in gains]
    lines = [title, "", f"| {header} | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for name, values in rows.items():
        cells = [mean_sd(values[v]) for v in variants]
        cells += [f"{100 * (statistics.mean(values[a]) - statistics.mean(values[b])):+.2f}" for _, a, b in gains]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines + [""] + list(notes) + ([""] if notes else [])


def markdown(tables: List[Tuple[str, str, Rows, List[str]]], mixes: Dict[str, dict], bilms: Sequence[str] = ()) -> str:
    lines: List[str] = [f"ELMo features from the biLM {', '.join(bilms)}.", ""] if bilms else []
    for title, header, rows, notes in tables:
        lines += table(title, header, rows, notes)
    if mixes:
        n_layers = len(next(iter(mixes.values()))["weights"])
        names = ["token layer"] + [f"LSTM layer {j}" for j in range(1, n_layers)]
        lines += ["Learned ELMo layer weights (softmax-normalized s_j, mean over seeds) and scale γ:", ""]
        lines += ["| task | " + " | ".join(names) + " | γ |", "|---|" + "---:|" * (n_layers + 1)]
        for task, mix in mixes.items():
            lines.append(f"| {task} | " + " | ".join(f"{w:.3f}" for w in mix["weights"]) + f" | {mix['gamma']:.3f} |")
    return "\n".join(lines) + "\n"


def chart(panels: List[Tuple[str, Rows]], mixes: Dict[str, dict], path: Path) -> None:
    """One bar panel per table (each variant's mean ± sd per row) and one of the layer weights."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratios = [max(1, len(rows)) for _, rows in panels] + ([2] if mixes else [])
    lines = panel_lines(ratios, CHART_LINE_WIDTH)
    width_units = max(sum(ratios[i] for i in line) for line in lines)
    fig = plt.figure(figsize=(2.2 + 1.3 * width_units, 4.4 * len(lines)))
    axes = []
    for subfig, line in zip(fig.subfigures(len(lines), 1, squeeze=False)[:, 0], lines):
        # a line narrower than the widest keeps the same scale: an empty slot fills the rest
        slack = width_units - sum(ratios[i] for i in line)
        line_axes = subfig.subplots(1, len(line) + bool(slack), width_ratios=[ratios[i] for i in line] + ([slack] if slack else []), squeeze=False)[0]
        if slack:
            line_axes[-1].set_axis_off()
        axes += list(line_axes[: len(line)])
    colors = dict(zip(VARIANTS, ("tab:blue", "tab:green", "tab:orange", "tab:red")))
    for ax, (title, rows) in zip(axes, panels):
        names = list(rows)
        variants = list(rows[names[0]])
        width = 0.8 / len(variants)
        for i, variant in enumerate(variants):
            means = [100 * statistics.mean(rows[name][variant]) for name in names]
            sds = [100 * statistics.stdev(rows[name][variant]) if len(rows[name][variant]) > 1 else 0 for name in names]
            x = [j - 0.4 + width * (i + 0.5) for j in range(len(names))]
            ax.bar(x, means, width, yerr=sds, label=VARIANTS[variant], color=colors[variant], capsize=2)
        ax.set_xticks(range(len(names)), names, rotation=30 if len(names) > 3 else 0)
        ax.set_title(title, fontsize="medium")
        ax.legend(fontsize="x-small", loc="upper left", ncol=2 if len(names) > 1 else 1)
        top = max(100 * (statistics.mean(v) + (statistics.stdev(v) if len(v) > 1 else 0)) for row in rows.values() for v in row.values())
        if len(names) == 1:
            low = min(100 * min(values) for values in rows[names[0]].values())
            ax.set_ylim(max(0.0, low - 3), min(100.0, top + 2 + 0.6 * (top - low)))
        else:
            # head room above the tallest bar keeps the legend off the bars
            ax.set_ylim(0, 1.3 * top)
    if mixes:
        ax_mix = axes[-1]
        n_layers = len(next(iter(mixes.values()))["weights"])
        step = 0.8 / len(mixes)
        for i, (task, mix) in enumerate(mixes.items()):
            ax_mix.bar([j - 0.4 + step * (i + 0.5) for j in range(n_layers)], mix["weights"], step, label=task)
        ax_mix.set_xticks(range(n_layers), ["token"] + [f"LSTM {j}" for j in range(1, n_layers)])
        ax_mix.set_title("Learned layer weights s_j")
        # Head room above the tallest bar keeps the legend off the bars.
        ax_mix.set_ylim(0, 1.6 * max(max(mix["weights"]) for mix in mixes.values()))
        ax_mix.legend(fontsize="x-small", loc="upper left")
    fig.savefig(path, dpi=110, bbox_inches="tight")


def panel_lines(ratios: List[int], width: int) -> List[List[int]]:
    """Panels (by index, in order) grouped into lines of at most `width` units (one panel wider
    than that gets a line of its own)."""
    lines: List[List[int]] = [[]]
    for index, ratio in enumerate(ratios):
        if lines[-1] and sum(ratios[i] for i in lines[-1]) + ratio > width:
            lines.append([])
        lines[-1].append(index)
    return lines


def read_records(metrics_dir: Path, pattern: str, baselines_dir: Optional[Path] = None) -> Dict[str, dict]:
    """The JSON record of each variant of a task that is in `metrics_dir`; a baseline variant
    it lacks from `baselines_dir`, where given."""
    records = {}
    for variant in VARIANTS:
        name = f"{pattern.format(variant)}.json"
        folders = [metrics_dir] + ([baselines_dir] if baselines_dir and variant in BASELINES else [])
        path = next((folder / name for folder in folders if (folder / name).is_file()), None)
        if path is not None:
            records[variant] = json.loads(path.read_text())
    return records


def seeds_of(record: dict) -> set:
    return {r["seed"] for r in record["runs"]}


def table_runs(records: Dict[str, dict]) -> Tuple[Runs, List[int], List[str]]:
    """The runs of the seeds the baseline and ELMo have in common, for them and every vectors
    variant that has all those seeds; the seeds; a note for each variant left out."""
    baseline, elmo = records["baseline"], records["elmo"]
    seeds = sorted(seeds_of(baseline) & seeds_of(elmo))
    if not seeds:
        raise SystemExit(f"error: {baseline['model']} and {elmo['model']} have no seed in common")
    runs: Runs = {}
    notes = []
    for variant in VARIANTS:
        record = records.get(variant)
        if record is None:
            continue
        if set(seeds) <= seeds_of(record):
            runs[variant] = [r for r in record["runs"] if r["seed"] in seeds]
        else:
            have = ", ".join(map(str, sorted(seeds_of(record)))) or "none"
            notes.append(f"Not shown yet: {VARIANTS[variant]} has seeds {have} of {', '.join(map(str, seeds))}.")
    return runs, seeds, notes


def seeds_summary(seeds: List[int]) -> str:
    """How a table summarizes its seeds: "mean ± sd over 3 seeds (0, 1, 2)", or "seed 0"."""
    return f"mean ± sd over {len(seeds)} seeds ({', '.join(map(str, seeds))})" if len(seeds) > 1 else f"seed {seeds[0]}"


def training_set(task: str, n_docs: Optional[int]) -> str:
    """What a NER table's runs were trained on, from the number of train docs their record names."""
    if task == "ner":
        return f"all {n_docs:,} train sentences" if n_docs else "the train set"
    sample = "the first" if task == "ner-low" else "a random sample (all genres) of"
    return f"{sample} {n_docs:,} train sentences" if n_docs else "a low-resource train set"


def main(
    metrics_dir: Path = typer.Argument(..., help="Folder with the JSON files of scripts/evaluate_runs.py"),
    output: Path = typer.Argument(..., help="Markdown file to write"),
    chart_path: Path = typer.Argument(..., help="PNG chart to write"),
    baselines: Annotated[Optional[Path], typer.Option(help="Folder to read the baseline variants from where METRICS_DIR lacks them")] = None,
) -> None:
    """Write the comparison table and chart."""
    records = {task: read_records(metrics_dir, pattern, baselines) for task, pattern in TASKS.items()}
    records = {task: found for task, found in records.items() if "baseline" in found and "elmo" in found}
    if not records:
        raise SystemExit(f"error: {metrics_dir} has no baseline/ELMo pair of results; run the evaluate commands first")
    tables: List[Tuple[str, str, Rows, List[str]]] = []
    panels: List[Tuple[str, Rows]] = []
    mixes: Dict[str, Dict[str, Any]] = {}
    for task, found in records.items():
        runs, seeds, notes = table_runs(found)
        over_seeds = seeds_summary(seeds)
        no_spread = "" if len(seeds) > 1 else f"\n({over_seeds}, no spread)"
        mix_name = MIX_NAMES[task].format(n=found["baseline"].get("train_docs") or 0)
        mixes[mix_name] = mean_mix(runs["elmo"])
        if "elmo-vectors" in runs:
            mixes[mix_name + " + vectors"] = mean_mix(runs["elmo-vectors"])
        if task.startswith("ner"):
            training = training_set(task, found["baseline"].get("train_docs"))
            rows = ner_rows(runs)
            tables.append((f"NER F1 on the UNER English-EWT test set, trained on {training}, {over_seeds}:", "entity", rows, notes))
            panels.append((f"NER F1, UNER EWT test\n(trained on {training}){no_spread}", rows))
        elif task == "tagger":
            rows = score_rows(runs, {"accuracy": "tag_acc"})
            tables.append((f"UPOS accuracy on the UD English-EWT test set, {over_seeds}:", "", rows, notes))
            panels.append(("UPOS accuracy" + no_spread, rows))
        else:
            rows = score_rows(runs, COREF_ROWS)
            tables.append((f"Coreference on the GUM test set (gold tokens, chains of 2+ mentions), {over_seeds}:", "score", rows, notes))
            panels.append(("Coreference F1, GUM test" + no_spread, rows))
    elmo_records = [found[v] for found in records.values() for v in ("elmo", "elmo-vectors") if v in found]
    bilms = sorted({str(record["bilm"]) for record in elmo_records if record.get("bilm")})
    text = markdown(tables, mixes, bilms)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf8")
    chart(panels, mixes, chart_path)
    print(text)


if __name__ == "__main__":
    typer.run(main)
