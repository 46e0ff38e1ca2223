"""`python -m spacy_elmo upgrade-config`: rewrite an older spacy-elmo training config for this
version; what is rewritten, and why, is said in `spacy_elmo/pipeline/config_upgrade.py`.
"""
from pathlib import Path

import typer

from ..errors import SpacyElmoError
from ..pipeline.config_upgrade import upgrade_config
from .app import app

__all__ = ["upgrade_config", "upgrade_config_command"]


@app.command("upgrade-config")
def upgrade_config_command(
    config: Path = typer.Argument(..., help="A config written for spacy-elmo 0.1 or 0.2"),
    output: Path = typer.Argument(..., help="Where to write the upgraded config ('-' for standard output)"),
) -> None:
    """Move the elmo component's 0.1 keys into its model block, and make every model block v2."""
    try:
        text, changed = upgrade_config(config.read_text(encoding="utf8"))
    except UnicodeDecodeError as err:
        typer.echo(f"error: {config}: not UTF-8 text (byte {err.start}: {err.reason})", err=True)
        raise typer.Exit(1)
    except (OSError, SpacyElmoError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1)
    if str(output) == "-":
        typer.echo(text)
    else:
        output.write_text(text, encoding="utf8")
        typer.echo(f"wrote {output}" + (f" (upgraded: {', '.join(changed)})" if changed else " (nothing to change)"))
