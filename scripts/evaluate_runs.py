"""Evaluate every seed of a training output on a test set, and read each model's learned ELMo
layer weights. Writes one JSON file: {"model", "test", "train", "train_docs", "bilm",
"runs": [{"seed", "scores", "layer_mix"}, ...]}, where train is the training set the runs name
and bilm the biLM their ELMo features came from (None without ELMo).

    python scripts/evaluate_runs.py training/ner-elmo corpus/ner/test.spacy metrics/ner-elmo.json
    python scripts/evaluate_runs.py training/coref-elmo corpus/coref/test.spacy metrics/coref-elmo.json --gold-tokens

With --gold-tokens the test docs keep their own tokens and stay whole (spacy-elmo.CorefCorpus.v1),
as coreference scores need; otherwise they are read as `spacy evaluate` reads them. With --seeds only
those seeds are scored, and an existing OUTPUT for the same runs and test set keeps its other seeds
(long runs trained and scored one at a time).
"""

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import spacy
import typer
from spacy.language import Language
from spacy.tokens import DocBin
from spacy.training import Corpus

from spacy_elmo.coref.corpus import create_coref_corpus
from spacy_elmo import learned_mixes

SCORES = ("ents_p", "ents_r", "ents_f", "ents_per_type", "tag_acc", "coref_conll_f", "coref_f")
SCORE_PREFIXES = ("coref_muc_", "coref_b3_", "coref_ceafe_", "coref_lea_")


def layer_mix(nlp: Language) -> Optional[Dict[str, Any]]:
    """The softmax-normalized layer weights s_j and the scale γ of the first component that
    learned an ELMo mix, or None for a pipeline without ELMo."""
    for name, mix in learned_mixes(nlp).items():
        return {"component": name, "weights": mix["weights"], "gamma": mix["gamma"]}
    return None


BILM_SOURCE = "spacy-elmo biLM "  # how the elmo component names its biLM in the meta's sources


def bilm_used(nlp: Language) -> Optional[str]:
    """The biLM of the pipeline's elmo component: the name its model card gives (the meta's
    sources), else what the config names; None for a pipeline without ELMo."""
    for source in nlp.meta.get("sources") or []:
        if str(source.get("name", "")).startswith(BILM_SOURCE):
            return source["name"][len(BILM_SOURCE):]
    for component in nlp.config.interpolate()["components"].values():
        if component.get("factory") == "elmo":
            return str(component["model"].get("bilm"))
    return None


def training_set(model_path: Path) -> Dict[str, Any]:
    """The training set a run's config names, and its number of docs where the file is here."""
    path = spacy.util.load_config(model_path / "config.cfg")["paths"]["train"]
    n_docs = len(DocBin().from_disk(path)) if path and Path(path).is_file() else None
    return {"train": path, "train_docs": n_docs}


def earlier_runs(output: Path, record: Dict[str, Any], seeds: List[int]) -> List[Dict[str, Any]]:
    """The runs of an existing `output` for the same training folder and test set, except `seeds`."""
    if not output.is_file():
        return []
    earlier = json.loads(output.read_text())
    for key in ("model", "test", "train", "bilm"):
        if earlier.get(key) != record[key]:
            raise SystemExit(f"error: {output} holds {key} {earlier.get(key)!r}, not {record[key]!r}: use another output")
    return [run for run in earlier["runs"] if run["seed"] not in seeds]


def main(
    training_dir: Path = typer.Argument(..., help="Folder of seedN/ outputs of scripts/train_seeds.py"),
    test_data: Path = typer.Argument(..., help="Test set (.spacy)"),
    output: Path = typer.Argument(..., help="JSON file to write"),
    gold_tokens: bool = typer.Option(False, help="Keep the test docs' own tokens and whole documents (coreference)"),
    seeds: Optional[str] = typer.Option(None, help="Comma-separated seeds to score, keeping the others in OUTPUT"),
) -> None:
    """Score model-best of each seed on `test_data`."""
    seed_dirs = sorted(training_dir.glob("seed*"), key=lambda p: int(p.name[4:]))
    if seeds is not None:
        wanted = [int(seed) for seed in seeds.split(",")]
        seed_dirs = [training_dir / f"seed{seed}" for seed in wanted]
        missing = [str(path) for path in seed_dirs if not (path / "model-best").is_dir()]
        if missing:
            raise SystemExit(f"error: no model-best in {', '.join(missing)}")
    runs, bilms = [], set()
    for seed_dir in seed_dirs:
        model = seed_dir / "model-best"
        nlp = spacy.load(model)
        corpus = create_coref_corpus(test_data) if gold_tokens else Corpus(test_data)
        scores = nlp.evaluate(list(corpus(nlp)))
        kept = {key: scores[key] for key in scores if key in SCORES or key.startswith(SCORE_PREFIXES)}
        kept = {key: value for key, value in kept.items() if value is not None}
        runs.append({"seed": int(seed_dir.name[4:]), "scores": kept, "layer_mix": layer_mix(nlp)})
        bilms.add(bilm_used(nlp))
        print(f"{model}: " + ", ".join(f"{k} {v:.4f}" for k, v in kept.items() if isinstance(v, float)))
    if not runs:
        raise SystemExit(f"error: no seedN/ training outputs in {training_dir}")
    output.parent.mkdir(parents=True, exist_ok=True)
    if len(bilms) > 1:
        raise SystemExit(f"error: the seeds in {training_dir} used different biLMs: {', '.join(map(str, bilms))}")
    record = {"model": str(training_dir), "test": str(test_data), **training_set(model), "bilm": bilms.pop()}
    if seeds is not None:
        runs += earlier_runs(output, record, [run["seed"] for run in runs])
    record["runs"] = sorted(runs, key=lambda run: run["seed"])
    output.write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    typer.run(main)
