"""scripts/evaluate_pipeline.py (CoNLL 2018 attachment scores) and scripts/pipeline_table.py."""
import json
from pathlib import Path

import spacy
from spacy.tokens import Doc
from spacy.training import Example

from . import load_script


def test_conll18_counts_punctuation_and_the_universal_relation():
    evaluate = load_script("evaluate_pipeline")
    vocab = spacy.blank("en").vocab
    words = ["Bush", "left", "."]
    gold = Doc(vocab, words=words, heads=[1, 1, 1], deps=["nsubj:pass", "ROOT", "punct"])
    # Head right, subtype wrong (counts for LAS); punctuation's head wrong (counts against both).
    predicted = Doc(vocab, words=words, heads=[1, 1, 0], deps=["nsubj", "ROOT", "punct"])
    scores = evaluate.conll18_attachment([Example(predicted, gold)])
    assert scores == {"dep_uas_conll18": 2 / 3, "dep_las_conll18": 2 / 3}
    assert evaluate.universal("ROOT") == "root" and evaluate.universal("obl:tmod") == "obl"


def test_the_table_gives_mean_sd_per_variant_and_the_gain(tmp_path: Path):
    table = load_script("pipeline_table")
    for name, values in {"elmo": [0.95, 0.97], "cnn": [0.94, 0.94], "cnn-vectors": [0.945]}.items():
        runs = [{"seed": seed, "scores": {"pos_acc": value, "ents_per_type": {"PER": {"f": value}}}} for seed, value in enumerate(values)]
        (tmp_path / f"{name}.json").write_text(json.dumps({"runs": runs}))
    records = {name: json.loads((tmp_path / f"{name}.json").read_text()) for name in ("elmo", "cnn", "cnn-vectors")}
    lines = table.table(records, [("elmo", "cnn"), ("elmo", "cnn-vectors")])
    assert lines[0] == (
        "| score | ELMo en_base_v2 (seeds 0,1) | CNN (en_core_web_sm recipe) (seeds 0,1) | CNN + floret vectors (seeds 0)"
        " | elmo − cnn | elmo − cnn-vectors |"
    )
    assert "| POS (UPOS) | 96.00 ± 1.41 | 94.00 ± 0.00 | 94.50 | +2.00 | +1.50 |" in lines
    assert "| ENTS_F PER | 96.00 ± 1.41 | 94.00 ± 0.00 | 94.50 | +2.00 | +1.50 |" in lines
    assert not any(line.startswith("| LAS") for line in lines)  # no parser scores: no row


def test_only_finished_seeds_are_scored(tmp_path, capsys):
    evaluate = load_script("evaluate_pipeline")
    for seed in (0, 1, 10):
        (tmp_path / f"seed{seed}" / "model-best").mkdir(parents=True)
    for seed in (0, 10):
        (tmp_path / f"seed{seed}" / "done.json").write_text("{}")
    assert evaluate.run_models(tmp_path) == [tmp_path / "seed0" / "model-best", tmp_path / "seed10" / "model-best"]
    assert "seed1: not finished (no done.json), left out" in capsys.readouterr().out
