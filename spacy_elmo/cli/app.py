"""The typer application that every command module registers on."""
import typer

app = typer.Typer(
    name="spacy_elmo",
    help="ELMo biLMs for spaCy: embed text, pretrain and evaluate biLMs.",
    no_args_is_help=True,
    add_completion=False,
)
