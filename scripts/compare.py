"""Compare baseline and ELMo runs: a markdown table (mean ± standard deviation over seeds) of NER F1
(micro and per label) and POS accuracy, the learned layer weights of each task, and a PNG chart.
The low-resource NER runs (ner-baseline-low.json, ner-elmo-low.json) are added when present.

    python scripts/compare.py metrics results.md results.png
"""

import json
import statistics
from pathlib import Path
from typing import Any, Dict, List, Sequence

import typer

RUNS = {"ner": ("ner-baseline", "ner-elmo"), "tagger": ("tagger-baseline", "tagger-elmo")}
LOW_RESOURCE = ("ner-baseline-low", "ner-elmo-low")


def mean_sd(values: Sequence[float]) -> str:
    """E.g. "71.23 ± 0.45" (percent; the standard deviation over seeds, 0 for one seed)."""
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{100 * statistics.mean(values):.2f} ± {100 * sd:.2f}"


def ner_rows(baseline: List[dict], elmo: List[dict]) -> Dict[str, List[List[float]]]:
    """F1 per seed of each variant: micro first, then per label."""
    labels = sorted(baseline[0]["scores"]["ents_per_type"])
    rows = {"micro": [[r["scores"]["ents_f"] for r in runs] for runs in (baseline, elmo)]}
    for label in labels:
        rows[label] = [[r["scores"]["ents_per_type"].get(label, {"f": 0.0})["f"] for r in runs] for runs in (baseline, elmo)]
    return rows


def mean_mix(runs: List[dict]) -> Dict[str, Any]:
    """Mean layer weights (list) and γ (float) over seeds."""
    mixes = [r["layer_mix"] for r in runs if r["layer_mix"]]
    n_layers = len(mixes[0]["weights"])
    return {
        "weights": [statistics.mean(m["weights"][j] for m in mixes) for j in range(n_layers)],
        "gamma": statistics.mean(m["gamma"] for m in mixes),
    }


def ner_table(title: str, ner: Dict[str, List[List[float]]]) -> List[str]:
    lines = [title, "", "| entity | baseline | ELMo | gain |", "|---|---:|---:|---:|"]
    for label, (base, elmo) in ner.items():
        gain = 100 * (statistics.mean(elmo) - statistics.mean(base))
        lines.append(f"| {label} | {mean_sd(base)} | {mean_sd(elmo)} | {gain:+.2f} |")
    return lines


def markdown(
    ners: Dict[str, Dict[str, List[List[float]]]], pos: List[List[float]], mixes: Dict[str, dict], n_seeds: str
) -> str:
    lines: List[str] = []
    for training, ner in ners.items():
        lines += ner_table(f"NER F1 on the UNER English-EWT test set, trained on {training}, mean ± sd over {n_seeds}:", ner)
        lines.append("")
    gain = 100 * (statistics.mean(pos[1]) - statistics.mean(pos[0]))
    lines += [f"UPOS accuracy on the UD English-EWT test set, mean ± sd over {n_seeds}:", ""]
    lines += ["| | baseline | ELMo | gain |", "|---|---:|---:|---:|"]
    lines.append(f"| accuracy | {mean_sd(pos[0])} | {mean_sd(pos[1])} | {gain:+.2f} |")
    n_layers = len(next(iter(mixes.values()))["weights"])
    names = ["token layer"] + [f"LSTM layer {j}" for j in range(1, n_layers)]
    lines += ["", "Learned ELMo layer weights (softmax-normalized s_j, mean over seeds) and scale γ:", ""]
    lines += ["| task | " + " | ".join(names) + " | γ |", "|---|" + "---:|" * (n_layers + 1)]
    for task, mix in mixes.items():
        lines.append(f"| {task} | " + " | ".join(f"{w:.3f}" for w in mix["weights"]) + f" | {mix['gamma']:.3f} |")
    return "\n".join(lines) + "\n"


def chart(
    ners: Dict[str, Dict[str, List[List[float]]]], pos: List[List[float]], mixes: Dict[str, dict], path: Path
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratios = [3] * len(ners) + [1, 2]
    fig, axes = plt.subplots(1, len(ratios), figsize=(4.3 * len(ratios), 4), gridspec_kw={"width_ratios": ratios})
    ax_pos, ax_mix = axes[-2], axes[-1]
    width = 0.38
    for ax_ner, (training, ner) in zip(axes, ners.items()):
        labels = list(ner)
        for offset, (index, name) in zip((-width / 2, width / 2), enumerate(("baseline", "ELMo"))):
            means = [100 * statistics.mean(ner[label][index]) for label in labels]
            sds = [100 * statistics.stdev(ner[label][index]) if len(ner[label][index]) > 1 else 0 for label in labels]
            ax_ner.bar([i + offset for i in range(len(labels))], means, width, yerr=sds, label=name, capsize=3)
        ax_ner.set_xticks(range(len(labels)), labels)
        ax_ner.set_title(f"NER F1, UNER EWT test\n(trained on {training})")
        ax_ner.legend()
    for index in (0, 1):
        values = pos[index]
        ax_pos.bar([index], [100 * statistics.mean(values)], 0.6,
                   yerr=[100 * statistics.stdev(values) if len(values) > 1 else 0], capsize=3)
    ax_pos.set_xticks([0, 1], ["baseline", "ELMo"])
    ax_pos.set_title("UPOS accuracy")
    low = min(100 * min(v) for v in pos)
    ax_pos.set_ylim(max(0.0, low - 3), 100)
    n_layers = len(next(iter(mixes.values()))["weights"])
    step = 0.8 / len(mixes)
    for i, (task, mix) in enumerate(mixes.items()):
        ax_mix.bar([j - 0.4 + step * (i + 0.5) for j in range(n_layers)], mix["weights"], step, label=task)
    ax_mix.set_xticks(range(n_layers), ["token"] + [f"LSTM {j}" for j in range(1, n_layers)])
    ax_mix.set_title("Learned layer weights s_j")
    ax_mix.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def read_runs(path: Path) -> List[dict]:
    if not path.is_file():
        raise SystemExit(f"error: {path} is missing; run the evaluate command first")
    return json.loads(path.read_text())["runs"]


def main(
    metrics_dir: Path = typer.Argument(..., help="Folder with the JSON files of scripts/evaluate_runs.py"),
    output: Path = typer.Argument(..., help="Markdown file to write"),
    chart_path: Path = typer.Argument(..., help="PNG chart to write"),
) -> None:
    """Write the comparison table and chart."""
    results = {name: read_runs(metrics_dir / f"{name}.json") for pair in RUNS.values() for name in pair}
    ners = {"the full train set": ner_rows(results["ner-baseline"], results["ner-elmo"])}
    mixes = {"NER": mean_mix(results["ner-elmo"])}
    if all((metrics_dir / f"{name}.json").is_file() for name in LOW_RESOURCE):
        low = [read_runs(metrics_dir / f"{name}.json") for name in LOW_RESOURCE]
        results.update(zip(LOW_RESOURCE, low))
        n_docs = json.loads((metrics_dir / f"{LOW_RESOURCE[0]}.json").read_text()).get("train_docs")
        ners[f"the first {n_docs:,} train sentences" if n_docs else "the low-resource train set"] = ner_rows(*low)
        mixes["NER (low-resource)"] = mean_mix(low[1])
    pos = [[r["scores"]["tag_acc"] for r in results[name]] for name in RUNS["tagger"]]
    mixes["POS"] = mean_mix(results["tagger-elmo"])
    seeds = sorted({r["seed"] for runs in results.values() for r in runs})
    n_seeds = f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''} ({', '.join(map(str, seeds))})"
    text = markdown(ners, pos, mixes, n_seeds)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf8")
    chart(ners, pos, mixes, chart_path)
    print(text)


if __name__ == "__main__":
    typer.run(main)
