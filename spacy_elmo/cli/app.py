"""The typer application that every command module registers on."""
from contextlib import contextmanager
from typing import Any, Iterator

import click
import typer
from typer.core import TyperGroup


@contextmanager
def interrupt_is_one_line() -> Iterator[None]:
    """Ctrl-C inside the `with` ends the program with "error: interrupted" on stderr and exit
    status 130, where typer would exit 130 without a word, and Python with a traceback."""
    try:
        yield
    except KeyboardInterrupt:
        typer.echo("error: interrupted", err=True)
        raise SystemExit(130) from None


class Commands(TyperGroup):
    """The app's commands; Ctrl-C in any of them is one line (`interrupt_is_one_line`)."""

    def invoke(self, ctx: click.Context) -> Any:
        with interrupt_is_one_line():
            return super().invoke(ctx)


app = typer.Typer(
    name="spacy_elmo",
    cls=Commands,
    help="ELMo biLMs for spaCy: embed text, pretrain and evaluate biLMs.",
    no_args_is_help=True,
    add_completion=False,
)
