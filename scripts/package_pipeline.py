"""Make a trained pipeline ready to ship: its meta (name, version, description, sources and
licences, requirements, test accuracy, speed), and its biLM saved as a reference to the bundled
model it is (name + sha256) instead of a copy of the weights.

    python scripts/package_pipeline.py training/pipeline/elmo pipelines/en_elmo_web_base \
        --metrics metrics/pipeline/elmo.json --speed metrics/pipeline/speed.json

MODEL is a trained pipeline, or a folder of seedN/ training outputs: then the seed whose
model-best has the best dev score (the training's own weighted score) ships; test scores do not
take part in the choice.

The folder's LICENSE (CC BY-SA 4.0, the attribution of the data and of the bundled biLM) goes
into the wheel with it; docs/pipeline.md ("As an installable package") builds the wheel.
"""
import json
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Optional

import spacy
import typer

from spacy_elmo import __version__
from spacy_elmo.cli.app import interrupt_is_one_line
from spacy_elmo.paths import staged_output

SOURCES = [
    {
        "name": "Universal Dependencies English Web Treebank (UD_English-EWT r2.16)",
        "url": "https://github.com/UniversalDependencies/UD_English-EWT",
        "license": "CC BY-SA 4.0",
        "author": "Silveira et al. 2014; Universal Dependencies contributors",
    },
    {
        "name": "Universal NER English-EWT (2022 pre-release train, final dev/test)",
        "url": "https://github.com/UniversalNER/UNER_English-EWT",
        "license": "CC BY-SA 4.0",
        "author": "Mayhew et al. 2024",
    },
    {
        "name": "spacy-elmo en_base_v2 biLM (bundled with spacy-elmo, not copied into this package)",
        "url": "https://github.com/explosion/spacy-elmo",
        "license": "CC BY-SA 4.0",
        "author": "spacy-elmo",
    },
]
# The works each source is cited by, for the LICENSE's attribution (by the source's url).
CITATIONS = {
    "https://github.com/UniversalDependencies/UD_English-EWT": (
        'Silveira et al., "A Gold Standard Dependency Corpus for English", LREC 2014. The annotations '
        "are CC BY-SA 4.0; the underlying text is the English Web Treebank (LDC2012T13): see the "
        "repository's README for its notices."
    ),
    "https://github.com/UniversalNER/UNER_English-EWT": (
        'Mayhew et al., "Universal NER: A Gold-Standard Multilingual Named Entity Recognition '
        'Benchmark", NAACL 2024.'
    ),
}
LICENSE_URL = "https://creativecommons.org/licenses/by-sa/4.0/"
# spaCy's meta keys for the scores evaluate_pipeline.py writes.
ACCURACY = ("tag_acc", "pos_acc", "morph_acc", "lemma_acc", "dep_uas", "dep_las", "sents_p", "sents_r", "sents_f", "ents_p", "ents_r", "ents_f", "ents_per_type")


def reference_bundled_bilm(nlp: Any) -> Optional[str]:
    """Mark the pipeline's biLM as the bundled model whose weights it has, so it is saved by
    name; the model's name, or None where no bundled model has exactly these weights."""
    import torch

    from spacy_elmo.bilm import bundled_models, load_bilm
    from spacy_elmo.bilm.loading import BUNDLED_DIR
    from spacy_elmo.layers.bundled_reference import mark

    bilm = nlp.get_pipe("elmo").bilm
    ours = bilm.state_dict()
    for name in bundled_models():
        bundled = load_bilm(name)
        bundled.drop_softmax()
        theirs = bundled.state_dict()
        if ours.keys() == theirs.keys() and all(torch.equal(ours[key], theirs[key]) for key in ours):
            mark(bilm, BUNDLED_DIR / name)
            return name
    return None


def pipeline_meta(meta: Dict[str, Any], name: str, version: str, scores: Optional[Dict[str, Any]], speed: Optional[float]) -> Dict[str, Any]:
    """The meta.json of the shipped pipeline."""
    meta = dict(meta)
    meta.update(
        name=name,
        version=version,
        description=(
            "English pipeline on ELMo features (spacy-elmo's bundled en_base_v2 biLM, frozen): tagger (XPOS), "
            "morphologizer (UPOS + features), dependency parser, trainable lemmatizer, NER (PER, LOC, ORG). "
            "Trained on UD English-EWT r2.16 and UNER English-EWT."
        ),
        author="spacy-elmo",
        url="https://github.com/explosion/spacy-elmo",
        license="CC BY-SA 4.0",
        sources=SOURCES,
        requirements=[f"spacy-elmo>={__version__},<{next_minor(__version__)}"],
    )
    if scores is not None:
        meta["performance"] = {key: scores[key] for key in ACCURACY if key in scores}
        meta["performance"]["dep_las_conll18"] = scores.get("dep_las_conll18")
        meta["performance"]["dep_uas_conll18"] = scores.get("dep_uas_conll18")
    if speed is not None:
        meta.setdefault("performance", {})["speed"] = speed
    return meta


def _wrap(text: str, **indents: str) -> List[str]:
    return textwrap.wrap(text, 96, break_long_words=False, break_on_hyphens=False, **indents)


def licence_text(package: str, bilm: Optional[str]) -> str:
    """The pipeline's LICENSE: CC BY-SA 4.0, the attribution of each source (SOURCES) and, where the
    biLM is a bundled one, its own licence and the attribution of its training text."""
    notice = (
        "This pipeline (its weights, vocabulary and meta) is licensed under the Creative Commons "
        f"Attribution-ShareAlike 4.0 International licence (CC BY-SA 4.0), {LICENSE_URL} (legal code: "
        f"{LICENSE_URL}legalcode), as the annotations it was trained on are. What was made from them: a "
        "statistical model trained on the annotations below, UNER English-EWT's entities laid over "
        "UD English-EWT r2.16 by sent_id. The code of spacy-elmo, which runs it, is Apache-2.0."
    )
    lines = [f"{package}: licence and attribution", "", *_wrap(notice), "", "Sources:"]
    for source in SOURCES:
        lines += ["", *_wrap(f"- {source['name']}", subsequent_indent="  "), f"  {source['url']}"]
        credit = f"{source['license']}; {source['author']}. {CITATIONS.get(source['url'], '')}".strip()
        lines += _wrap(credit, initial_indent="  ", subsequent_indent="  ")
    if bilm is not None:
        from spacy_elmo.bilm.loading import BUNDLED_DIR

        lines += ["", *_wrap(f"The pipeline was trained on the features of the bundled biLM {bilm}; its licence ({bilm}/LICENSE.md in spacy-elmo's wheel) follows."), ""]
        lines.append((BUNDLED_DIR / bilm / "LICENSE.md").read_text(encoding="utf8").strip())
    return "\n".join(lines) + "\n"


def dev_score(model: Path) -> float:
    """The weighted dev score `spacy train` chose model-best by (its score_weights, its meta)."""
    weights = spacy.util.load_config(model / "config.cfg")["training"]["score_weights"]
    performance = json.loads((model / "meta.json").read_text(encoding="utf8"))["performance"]
    return sum(weight * performance[key] for key, weight in weights.items() if weight and key in performance)


def best_seed(runs: Path) -> Path:
    """The model-best of the finished seed (train_seeds.py's done.json) with the best dev score
    among RUNS/seedN; a folder that is a pipeline itself comes back as it is."""
    if (runs / "meta.json").is_file():
        return runs
    candidates = sorted(seed / "model-best" for seed in runs.glob("seed*") if (seed / "done.json").is_file())
    if not candidates:
        raise SystemExit(f"error: {runs} is neither a pipeline nor a folder of finished seedN/ outputs (with done.json)")
    scores = {model: dev_score(model) for model in candidates}
    for model, score in scores.items():
        print(f"{model}: dev score {score:.4f}")
    return max(scores, key=scores.get)


def next_minor(version: str) -> str:
    """The first version of the next minor release: "0.2.0" -> "0.3.0"."""
    major, minor = version.split(".")[:2]
    return f"{major}.{int(minor) + 1}.0"


def check_output(output: Path) -> None:
    """OUTPUT is new, an empty folder or a pipeline: the folder written replaces it whole."""
    replaceable = output.is_dir() and ((output / "config.cfg").is_file() or not any(output.iterdir()))
    if output.exists() and not replaceable:
        raise SystemExit(f"error: {output} is neither a spaCy pipeline nor an empty folder; name a new folder")


@interrupt_is_one_line()
def main(
    model: Path = typer.Argument(..., help="The trained pipeline, or a folder of seedN/ outputs (the best seed on dev ships)"),
    output: Path = typer.Argument(..., help="The folder to write (e.g. pipelines/en_elmo_web_base)"),
    name: str = typer.Option("elmo_web_base", help="The pipeline's name without the language (spaCy: {lang}_{name})"),
    version: str = typer.Option("0.1.0", help="The pipeline's version"),
    metrics: Optional[Path] = typer.Option(None, help="evaluate_pipeline.py's JSON: the test scores of this model go into the meta"),
    speed: Optional[Path] = typer.Option(None, help="trained_pipeline_speed.py's JSON: words/s of the `elmo` entry"),
) -> None:
    """Write the pipeline with its meta; its biLM as a bundled reference where it is one. OUTPUT
    appears only complete; Ctrl-C or an error leaves it as it was."""
    check_output(output)
    model = best_seed(model)
    nlp = spacy.load(model)
    bundled = reference_bundled_bilm(nlp)
    scores = None
    if metrics is not None:
        runs = json.loads(metrics.read_text(encoding="utf8"))["runs"]
        matching = [run for run in runs if Path(run["model"]).expanduser().resolve() == model.resolve()]
        if not matching:
            raise SystemExit(f"error: {metrics} has no scores of {model}")
        scores = matching[0]["scores"]
    words_per_second = json.loads(speed.read_text(encoding="utf8"))["pipelines"]["elmo"]["words_per_second"] if speed else None
    nlp.meta.update(pipeline_meta(nlp.meta, name, version, scores, words_per_second))
    # The training machine's data paths mean nothing elsewhere: shipped as null, as spaCy's own pipelines do.
    for key in nlp.config["paths"]:
        nlp.config["paths"][key] = None
    with staged_output(output) as staging:
        nlp.to_disk(staging)
        # spaCy's `package` puts a LICENSE of the pipeline folder into the package and its wheel.
        (staging / "LICENSE").write_text(licence_text(f"{nlp.meta['lang']}_{name}", bundled), encoding="utf8")
    size = sum(p.stat().st_size for p in output.rglob("*") if p.is_file())
    print(f"{model} -> {output} ({nlp.meta['lang']}_{name} {version}; biLM: {bundled or 'saved whole'}; {size / 1e6:.1f} MB)")


if __name__ == "__main__":
    typer.run(main)
