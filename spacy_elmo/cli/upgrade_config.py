"""`python -m spacy_elmo upgrade-config`: rewrite an older spacy-elmo training config for this
version (the rewrite itself: `spacy_elmo/pipeline/config_upgrade.py`).

- spacy-elmo 0.1: the weights (`model`, `options`) and the segmentation settings were keys of
  the `elmo` component; they now belong to its model block (`model` is called `bilm` there).
- spacy-elmo 0.2: the model block `spacy-elmo.ElmoModel.v1` (wherever it is, also inside an
  `ElmoEmbed.v1` block) becomes `spacy-elmo.ElmoModel.v2`, whose `dtype` is called
  `compute_dtype` and which adds `runtime` (by default "torch", as v1 runs).

Every other line of the config is kept. v1 blocks keep working as they are; the rewrite is for
configs that are to use the new settings.
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
