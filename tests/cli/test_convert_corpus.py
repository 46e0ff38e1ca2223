"""`python -m spacy_elmo convert-corpus`: CoNLL-U (+ IOB2 entities) to a DocBin, one line on error."""
from pathlib import Path

import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

from spacy_elmo.cli.main import app
from tests.corpora.test_docs import CONLLU, IOB2

runner = CliRunner()


def test_writes_a_docbin_spacy_reads(tmp_path: Path):
    (tmp_path / "ud.conllu").write_text(CONLLU, encoding="utf8")
    (tmp_path / "ner.iob2").write_text(IOB2, encoding="utf8")
    output = tmp_path / "train.spacy"
    result = runner.invoke(app, ["convert-corpus", str(tmp_path / "ud.conllu"), str(output), "--ner", str(tmp_path / "ner.iob2"), "-n", "10"])
    assert result.exit_code == 0, result.output
    assert "3 sentences, 10 words, 2 docs, 2 entities" in result.output
    docs = list(DocBin().from_disk(output).get_docs(spacy.blank("en").vocab))
    assert [d.text for d in docs] == ["Bush went home. I'm here.", "Paris."]
    assert docs[0][1].lemma_ == "go" and docs[0].has_annotation("DEP")
    again = runner.invoke(app, ["convert-corpus", str(tmp_path / "ud.conllu"), str(output)])
    assert again.exit_code == 1 and "exists; pass --force" in again.output


def test_bad_file_is_one_line(tmp_path: Path):
    (tmp_path / "ud.conllu").write_text("1\tBush\n", encoding="utf8")
    result = runner.invoke(app, ["convert-corpus", str(tmp_path / "ud.conllu"), str(tmp_path / "x.spacy")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"error: {tmp_path / 'ud.conllu'}:1: expected 10 tab-separated CoNLL-U columns, got 2"]
