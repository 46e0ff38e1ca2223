"""`RemovedOptionsCommand`: which arguments count as a removed option (every name in the table is
refused with its new spelling in tests/cli/test_one_line_errors.py)."""
from typing import List

import typer
from typer.testing import CliRunner

from spacy_elmo.cli.removed_options import EXIT_USAGE, REMOVED_OPTIONS, RemovedOptionsCommand


def tiny_app(name):
    """A one-command app whose command is called `name`, echoing its arguments."""
    app = typer.Typer()

    @app.command(name, cls=RemovedOptionsCommand)
    def command(args: List[str] = typer.Argument(None), new: str = typer.Option("", "--compute-dtype")) -> None:
        typer.echo(f"args={args} new={new}")

    @app.command("other")
    def other() -> None:  # a second command, so that typer keeps the command names
        pass

    return app


def test_a_removed_option_stops_the_command_before_it_runs():
    result = CliRunner().invoke(tiny_app("embed"), ["embed", "in.txt", "--dtype=int8"])
    assert EXIT_USAGE == 2 and result.exit_code == EXIT_USAGE
    assert result.output == "error: --dtype is now --compute-dtype\n"


def test_after_a_double_dash_the_old_names_are_arguments():
    result = CliRunner().invoke(tiny_app("embed"), ["embed", "--compute-dtype", "int8", "--", "--dtype", "--layers=2"])
    assert result.exit_code == 0, result.output
    assert result.output == "args=['--dtype', '--layers=2'] new=int8\n"


def test_only_the_removed_names_of_the_command_itself_are_refused():
    assert "--dtype" not in REMOVED_OPTIONS.get("evaluate", {})
    result = CliRunner().invoke(tiny_app("evaluate"), ["evaluate", "--", "--dtype"])
    assert result.exit_code == 0 and result.output == "args=['--dtype'] new=\n"
    result = CliRunner().invoke(tiny_app("evaluate"), ["evaluate", "--dtype"])
    assert result.exit_code == 2 and "is now" not in result.output  # click's own usage error
    assert "No such option: --dtype" in result.output
    # a prefix of a removed name is not that name
    result = CliRunner().invoke(tiny_app("embed"), ["embed", "--dtypes"])
    assert result.exit_code == 2 and "is now" not in result.output
