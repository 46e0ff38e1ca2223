"""Score a trained pipeline on a UD test set with gold words and gold sentences, in spaCy's metric
names, and UAS/LAS as the CoNLL 2018 shared task's script counts them.

    python scripts/evaluate_pipeline.py training/pipeline/elmo corpus/pipeline/test-sents.spacy \
        corpus/pipeline/test.spacy metrics/pipeline/elmo.json

RUNS: a folder of seedN/ training outputs (each scored by its model-best), or one pipeline folder.

SENTENCES: one gold sentence per doc (from `convert-corpus` with -n 1); every score but SENTS_F
comes from these. DOCS: the same text with several sentences per doc (-n 10), for SENTS_F, the
parser's sentence boundaries. spaCy's own dep_uas/dep_las leave punctuation out and compare whole
labels; dep_uas_conll18/dep_las_conll18 count every word, punctuation included, and compare the
universal part of the relation (before ":"), as the CoNLL 2018 evaluation script does.
"""
import json
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List

import spacy
import typer
from spacy.language import Language
from spacy.scorer import Scorer
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_elmo import learned_mixes

REPORTED = ("tag_acc", "pos_acc", "morph_acc", "lemma_acc", "dep_uas", "dep_las", "ents_p", "ents_r", "ents_f", "ents_per_type")


def predict(nlp: Language, references: List[Doc], batch_size: int = 64) -> List[Example]:
    """Run the pipeline on the reference docs' words and spaces alone."""
    words = (Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc]) for doc in references)
    return [Example(predicted, reference) for predicted, reference in zip(nlp.pipe(words, batch_size=batch_size), references)]


def universal(label: str) -> str:
    """The universal part of a dependency relation, lower-cased ("ROOT" -> "root")."""
    return label.split(":", 1)[0].lower()


def conll18_attachment(examples: Iterable[Example]) -> Dict[str, float]:
    """UAS and LAS over every word (gold tokenization, so words align one to one)."""
    words = heads = labelled = 0
    for example in examples:
        for predicted, gold in zip(example.predicted, example.reference):
            words += 1
            if predicted.head.i == gold.head.i:
                heads += 1
                labelled += universal(predicted.dep_) == universal(gold.dep_)
    return {"dep_uas_conll18": heads / words, "dep_las_conll18": labelled / words}


def evaluate(nlp: Language, sentences: List[Doc], docs: List[Doc]) -> Dict[str, Any]:
    """Scores on gold sentences, SENTS_F on multi-sentence docs, and the words per second."""
    start = time.perf_counter()
    examples = predict(nlp, sentences)
    seconds = time.perf_counter() - start
    scorer = Scorer(nlp)
    scores = {key: value for key, value in scorer.score(examples).items() if key in REPORTED}
    if "parser" in nlp.pipe_names:
        scores.update(conll18_attachment(examples))
        sents = scorer.score(predict(nlp, docs))
        scores.update({key: sents[key] for key in ("sents_p", "sents_r", "sents_f")})
    scores["words_per_second"] = sum(len(doc) for doc in sentences) / seconds
    return scores


def run_models(runs: Path) -> List[Path]:
    """The pipelines to score: RUNS itself, or the model-best of each finished seedN/ in it (with
    train_seeds.py's done.json; a seed still training is left out, and said so)."""
    if (runs / "meta.json").is_file():
        return [runs]
    seeds = sorted(runs.glob("seed*"), key=lambda path: int(path.name[4:]))
    for seed in seeds:
        if not (seed / "done.json").is_file():
            print(f"{seed}: not finished (no done.json), left out", flush=True)
    models = [seed / "model-best" for seed in seeds if (seed / "done.json").is_file()]
    if not models:
        raise SystemExit(f"error: {runs} is neither a pipeline folder nor a folder of finished seedN/ outputs (with done.json)")
    return models


def main(
    runs: Path = typer.Argument(..., help="A folder of seedN/ training outputs, or one pipeline folder"),
    sentences: Path = typer.Argument(..., help="Test set, one gold sentence per doc (.spacy)"),
    docs: Path = typer.Argument(..., help="The same test set, several sentences per doc (.spacy), for SENTS_F"),
    output: Path = typer.Argument(..., help="JSON file to write"),
) -> None:
    """Write each pipeline's test scores and learned layer mixes as JSON."""
    records = []
    for model in run_models(runs):
        nlp = spacy.load(model)
        read = lambda path: list(DocBin().from_disk(path).get_docs(nlp.vocab))  # noqa: E731
        scores = evaluate(nlp, read(sentences), read(docs))
        records.append({"model": str(model), "seed": nlp.config.interpolate()["training"]["seed"], "scores": scores, "layer_mixes": learned_mixes(nlp)})
        summary = ", ".join(f"{key} {value:.4f}" for key, value in scores.items() if isinstance(value, float))
        print(f"{model}: {summary}", flush=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"runs_dir": str(runs), "test": str(sentences), "runs": records}, indent=2) + "\n", encoding="utf8")
    print(f"-> {output}")


if __name__ == "__main__":
    typer.run(main)
