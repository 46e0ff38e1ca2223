"""`python -m spacy_elmo upgrade-config`: rewrite a spacy-elmo 0.1 training config for this version.

In 0.1 the weights (`model`, `options`) and the segmentation settings were keys of the `elmo`
component; they now belong to its model block, `spacy-elmo.ElmoModel.v1` (`model` is called
`bilm` there). Every other line of the config is kept.
"""
from pathlib import Path
from typing import Any, Dict, List

import typer

from ..errors import SpacyElmoError
from ..registry_names import ELMO_MODEL
from .app import app

FACTORY = "elmo"
MOVED = ("options", "context", "window", "stride", "batch_size", "max_tokens", "device", "dtype")


@app.command("upgrade-config")
def upgrade_config_command(
    config: Path = typer.Argument(..., help="A config written for spacy-elmo 0.1"),
    output: Path = typer.Argument(..., help="Where to write the upgraded config ('-' for standard output)"),
) -> None:
    """Move the elmo component's 0.1 keys into its model block."""
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
        typer.echo(f"wrote {output}" + (f" (moved into the model block: {', '.join(changed)})" if changed else " (nothing to change)"))


def upgrade_config(text: str) -> "tuple[str, List[str]]":
    """The config text with each 0.1 `elmo` component upgraded, and the keys that moved."""
    from thinc.api import Config

    try:
        config = Config().from_str(text, interpolate=False)
    except Exception as err:  # confection raises several types for unreadable text
        raise SpacyElmoError(f"cannot read the config: {err}") from None
    moved: List[str] = []
    for name, component in config.get("components", {}).items():
        if component.get("factory") != FACTORY or isinstance(component.get("model"), dict):
            continue
        block: Dict[str, Any] = {"@architectures": ELMO_MODEL, "bilm": component.pop("model", None)}
        moved.append(f"{name}.model -> {name}.model.bilm")
        for key in MOVED:
            if key in component:
                block[key] = component.pop(key)
                moved.append(f"{name}.{key}")
        component["model"] = block
    return config.to_str(interpolate=False), moved
