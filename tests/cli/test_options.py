"""The command line is consistent: a short option means the same long option in every command."""
from collections import defaultdict

import typer.main

from spacy_elmo.cli import main as _register_commands  # noqa: F401
from spacy_elmo.cli.app import app


def test_a_short_option_means_one_long_option_everywhere():
    group = typer.main.get_command(app)
    meanings = defaultdict(set)
    for name, command in group.commands.items():
        for parameter in command.params:
            short = [o for o in parameter.opts if len(o) == 2 and o.startswith("-")]
            long = [o for o in parameter.opts if o.startswith("--")]
            for flag in short:
                meanings[flag].update(long)
    assert meanings, "no command has a short option"
    assert {flag: sorted(longs) for flag, longs in meanings.items() if len(longs) > 1} == {}
