"""`python -m spacy_elmo convert-corpus SOURCE OUTPUT`: UD CoNLL-U or UNER IOB2 as a `.spacy` file."""
from pathlib import Path
from typing import Optional

import typer

from ..errors import SpacyElmoError
from .app import app


@app.command("convert-corpus")
def convert_corpus_command(
    source: Path = typer.Argument(..., help="A .conllu (UD) or .iob2 (UNER) file, plain or .gz"),
    output: Path = typer.Argument(..., help="The .spacy file (a DocBin) to write"),
    ner: Optional[Path] = typer.Option(None, help="An .iob2 file whose entities go onto the CoNLL-U sentences with the same sent_id"),
    n_sents: int = typer.Option(1, "--n-sents", "-n", help="Sentences per doc within a CoNLL-U document (1: each gold sentence a doc)"),
    limit: int = typer.Option(0, help="Only the first N sentences (0: all)"),
    force: bool = typer.Option(False, "--force", help="Overwrite OUTPUT if it exists"),
) -> None:
    """Write a treebank or NER file as spaCy training data: words, spaces, lemmas, UPOS (pos),
    XPOS (tag), features (morph), dependencies and sentence starts from CoNLL-U; entities from
    IOB2."""
    import spacy
    from spacy.tokens import DocBin

    from ..corpora import corpus_docs

    try:
        if output.exists() and not force:
            raise SpacyElmoError(f"{output} exists; pass --force to overwrite it")
        if output.suffix != ".spacy":
            raise SpacyElmoError(f"{output}: the output is a DocBin, name it *.spacy")
        docs, counts = corpus_docs(spacy.blank("xx").vocab, source, ner=ner, n_sents=n_sents, limit=limit)
        output.parent.mkdir(parents=True, exist_ok=True)
        DocBin(docs=docs, store_user_data=False).to_disk(output)
    except (SpacyElmoError, OSError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1)
    typer.echo(f"{source} -> {output}: " + ", ".join(f"{value:,} {key}" for key, value in counts.items()))
