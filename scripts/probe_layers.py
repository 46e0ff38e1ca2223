"""What each biLM layer holds: token-level linear probes for NER tags and UPOS.

For every layer of the biLM (0: the character-CNN token layer; 1, 2, ...: the LSTM layers) and
for the layer mix each downstream task learned, a multinomial logistic regression is trained on
the dev set's frozen features and scored on the test set: NER as exact-span micro F1 of the
decoded IOB tags, UPOS as token accuracy. The probes are equal for every layer (standardized
features, L2 1e-4, full-batch L-BFGS, 200 iterations), so rows differ only in the features.

    python scripts/probe_layers.py en_base corpus/ner corpus/pos metrics/probes.json \\
        --mix NER=metrics/ner-elmo.json --mix UPOS=metrics/tagger-elmo.json \\
        --markdown metrics/probes.md --chart metrics/probes.png
"""

import json
import statistics
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

import numpy as np
import spacy
import torch
import typer
from spacy.tokens import Doc, DocBin

from spacy_elmo import load_bilm
from spacy_elmo.mixing import mix_layers

L2 = 1e-4
ITERATIONS = 200
Span = Tuple[int, int, int, str]  # sentence, start, end, label


def read_docs(path: Path) -> List[Doc]:
    if not path.is_file():
        raise SystemExit(f"error: {path} is missing; run the convert commands first")
    return list(DocBin().from_disk(path).get_docs(spacy.blank("en").vocab))


def token_labels(docs: Sequence[Doc], task: str) -> List[str]:
    if task == "NER":
        return [f"{t.ent_iob_}-{t.ent_type_}" if t.ent_type_ else "O" for doc in docs for t in doc]
    return [t.pos_ for doc in docs for t in doc]


def spans(tags: Sequence[str], lengths: Sequence[int]) -> Set[Span]:
    """Exact spans of IOB tags per sentence; an I- tag that does not continue a span starts one."""
    found: Set[Span] = set()
    offset = 0
    for sentence, length in enumerate(lengths):
        start, label = None, None
        for i, tag in enumerate(list(tags[offset : offset + length]) + ["O"]):
            prefix, _, kind = tag.partition("-")
            if label is not None and (prefix != "I" or kind != label):
                found.add((sentence, start, i, label))
                start, label = None, None
            if prefix in ("B", "I") and label is None:
                start, label = i, kind
        offset += length
    return found


def span_f1(gold: Set[Span], predicted: Set[Span]) -> float:
    correct = len(gold & predicted)
    return 2 * correct / (len(gold) + len(predicted)) if gold or predicted else 1.0


def features(bilm, docs: Sequence[Doc]) -> np.ndarray:
    """(n_layers, n_tokens, dim) biLM layers of every token, sentences in order."""
    arrays = bilm.embed_sentences([[t.text for t in doc] for doc in docs])
    return np.concatenate(arrays, axis=1)


def fit_probe(x: np.ndarray, y: np.ndarray, n_classes: int, seed: int = 0) -> torch.nn.Linear:
    """Multinomial logistic regression, full-batch L-BFGS with L2."""
    torch.manual_seed(seed)
    probe = torch.nn.Linear(x.shape[1], n_classes)
    inputs, targets = torch.from_numpy(x), torch.from_numpy(y)
    optimizer = torch.optim.LBFGS(probe.parameters(), max_iter=ITERATIONS, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(probe(inputs), targets) + L2 * probe.weight.square().sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    return probe


def probe_score(task: str, train: np.ndarray, test: np.ndarray, labels: Dict[str, List[str]], test_lengths: List[int]) -> float:
    mean, sd = train.mean(0), train.std(0) + 1e-6
    classes = sorted(set(labels["dev"]))
    index = {label: i for i, label in enumerate(classes)}
    y = np.array([index[label] for label in labels["dev"]])
    probe = fit_probe(((train - mean) / sd).astype(np.float32), y, len(classes))
    with torch.no_grad():
        predicted = probe(torch.from_numpy(((test - mean) / sd).astype(np.float32))).argmax(1).numpy()
    tags = [classes[i] for i in predicted]
    if task == "NER":
        return span_f1(spans(labels["test"], test_lengths), spans(tags, test_lengths))
    return float(np.mean([p == g for p, g in zip(tags, labels["test"])]))


def learned_mix(path: Path) -> Optional[List[float]]:
    """Mean layer coefficients γ·s_j over the seeds of a metrics file of evaluate_runs.py."""
    if not path.is_file():
        return None
    runs = [run["layer_mix"] for run in json.loads(path.read_text())["runs"] if run.get("layer_mix")]
    mixes = [[mix["gamma"] * w for w in mix["weights"]] for mix in runs]
    return [statistics.mean(column) for column in zip(*mixes)] if mixes else None


def markdown(results: Dict[str, Dict[str, float]], mixes: Dict[str, List[float]], model: str) -> str:
    tasks = list(results)
    rows = list(next(iter(results.values())))
    lines = [f"Linear probes on the layers of `{model}` (trained on dev, scored on test):", ""]
    lines += ["| features | " + " | ".join(f"{t} ({'span F1' if t == 'NER' else 'accuracy'})" for t in tasks) + " |"]
    lines += ["|---|" + "---:|" * len(tasks)]
    for row in rows:
        lines.append(f"| {row} | " + " | ".join(f"{100 * results[t][row]:.2f}" for t in tasks) + " |")
    if mixes:
        lines += ["", "Learned layer coefficients γ·s_j used for the mix rows (mean over seeds):", ""]
        for task, weights in mixes.items():
            lines.append(f"- {task}: " + ", ".join(f"layer {j} {w:.3f}" for j, w in enumerate(weights)))
    return "\n".join(lines) + "\n"


def chart(results: Dict[str, Dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.8))
    for ax, (task, scores) in zip(np.atleast_1d(axes), results.items()):
        names = list(scores)
        values = [100 * scores[n] for n in names]
        ax.bar(range(len(names)), values, color=["C0" if n.startswith("layer") else "C1" for n in names])
        ax.set_xticks(range(len(names)), names, rotation=20, ha="right")
        ax.set_ylim(max(0.0, min(values) - 10), min(100.0, max(values) + 3))
        ax.set_title(f"{task} probe ({'span F1' if task == 'NER' else 'accuracy'}, test)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(
    model: str = typer.Argument(..., help="The biLM: a bundled short name or a model folder"),
    ner_dir: Path = typer.Argument(..., help="Folder with dev.spacy and test.spacy of NER"),
    pos_dir: Path = typer.Argument(..., help="Folder with dev.spacy and test.spacy of UPOS"),
    output: Path = typer.Argument(..., help="JSON file of the scores"),
    mix: List[str] = typer.Option([], help="TASK=metrics.json: add a row with that task's learned mix"),
    markdown_path: Path = typer.Option(None, "--markdown", help="Markdown table to write"),
    chart_path: Path = typer.Option(None, "--chart", help="PNG chart to write"),
    threads: int = typer.Option(2, help="torch CPU threads"),
) -> None:
    """Probe every layer and each learned mix for NER and UPOS."""
    torch.set_num_threads(threads)
    bilm = load_bilm(model)
    mixes = {}
    for item in mix:
        task, _, path = item.partition("=")
        weights = learned_mix(Path(path))
        if weights is not None:
            mixes[task] = weights
    results: Dict[str, Dict[str, float]] = {}
    for task, folder in (("NER", ner_dir), ("UPOS", pos_dir)):
        docs = {split: read_docs(folder / f"{split}.spacy") for split in ("dev", "test")}
        labels = {split: token_labels(d, task) for split, d in docs.items()}
        layers = {split: features(bilm, d) for split, d in docs.items()}
        lengths = [len(doc) for doc in docs["test"]]
        results[task] = {}
        for j in range(bilm.n_layers):
            results[task][f"layer {j}"] = probe_score(task, layers["dev"][j], layers["test"][j], labels, lengths)
            print(f"{task} layer {j}: {100 * results[task][f'layer {j}']:.2f}", flush=True)
        for mix_task, weights in mixes.items():
            name = f"{mix_task} mix"
            mixed = {split: mix_layers(weights, layers[split]) for split in ("dev", "test")}
            results[task][name] = probe_score(task, mixed["dev"], mixed["test"], labels, lengths)
            print(f"{task} {name}: {100 * results[task][name]:.2f}", flush=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"model": model, "scores": results, "mixes": mixes}, indent=2))
    if markdown_path:
        markdown_path.write_text(markdown(results, mixes, model), encoding="utf8")
    if chart_path:
        chart(results, chart_path)


if __name__ == "__main__":
    typer.run(main)
