"""Shared by the command tests."""
from typer.testing import CliRunner

from spacy_elmo.cli import main as _register_commands  # noqa: F401
from spacy_elmo.cli.app import app


def run_cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])
