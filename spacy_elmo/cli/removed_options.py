"""Options that 0.3.0 removed: a command given one stops before parsing, with one line naming
the option that replaced it (exit code 2, click's code for a usage error). Nothing is read under
the old names; the table only words the error (CHANGELOG.md, "Removed spellings")."""
from typing import Dict, List

import click
import typer
from typer.core import TyperCommand

REMOVED_OPTIONS: Dict[str, Dict[str, str]] = {
    "convert": {"--dtype": "--storage-dtype"},
    "embed": {"--dtype": "--compute-dtype", "--storage": "--storage-dtype", "--layers": "--layer"},
    "pretrain": {"--precision": "--compute-dtype", "--model-dtype": "--storage-dtype"},
}
EXIT_USAGE = 2


class RemovedOptionsCommand(TyperCommand):
    """A typer command that answers a removed option with `error: --old is now --new`."""

    def parse_args(self, ctx: click.Context, args: List[str]) -> List[str]:
        removed = REMOVED_OPTIONS.get(self.name or "", {})
        for arg in args:
            if arg == "--":
                break
            old = arg.split("=", 1)[0]
            if old in removed:
                typer.echo(f"error: {old} is now {removed[old]}", err=True)
                ctx.exit(EXIT_USAGE)
        return super().parse_args(ctx, args)
