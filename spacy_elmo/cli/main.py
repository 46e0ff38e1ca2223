"""Import every command module so that its commands register on the app, then run it. Where a
module needs an extra that is not installed (PyTorch), its commands still show in `--help` and
say in one line what to install."""
from importlib import import_module
import typer

from ..dependencies import MissingDependency
from .app import app

# Each command module and the commands it registers.
COMMANDS = {
    "convert": ("convert",),
    "convert_corpus": ("convert-corpus",),
    "embed": ("embed",),
    "evaluate": ("evaluate",),
    "export_onnx": ("export-onnx",),
    "init_config": ("init-config",),
    "models": ("download", "models"),
    "pretrain": ("pretrain",),
    "set_runtime": ("set-runtime",),
    "upgrade_config": ("upgrade-config",),
}


def register_commands() -> None:
    """Import the command modules; a missing extra registers commands that report it."""
    for module, names in COMMANDS.items():
        try:
            import_module(f"{__package__}.{module}")
        except MissingDependency as err:
            for name in names:
                _register_unavailable(name, str(err))


def _register_unavailable(name: str, reason: str) -> None:
    """A command `name` whose every call says what it needs (`reason`: a MissingDependency's
    "X needs Y: pip install ..."), and exits 1."""
    message = f"python -m spacy_elmo {name} needs {reason.split(' needs ', 1)[-1]}"
    settings = {"allow_extra_args": True, "ignore_unknown_options": True}

    @app.command(name, context_settings=settings, help=f"Unavailable here: {message}.", add_help_option=False)
    def unavailable(ctx: typer.Context) -> None:
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(1)


register_commands()


def main() -> None:
    """Run the command line interface; a missing extra met while running is one line."""
    try:
        app()
    except MissingDependency as err:
        typer.echo(f"error: {err}", err=True)
        raise SystemExit(1) from None
