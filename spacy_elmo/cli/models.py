"""`python -m spacy_elmo download NAME` and `python -m spacy_elmo models`: the published weights."""
import typer

from ..errors import SpacyElmoError
from .app import app


@app.command("download")
def download_command(name: str = typer.Argument(..., help="A published model: elmo-small, elmo-medium, elmo-original, elmo-original-5.5b")) -> None:
    """Fetch a published model into the cache ahead of time."""
    from ..bilm.remote import fetch

    try:
        folder = fetch(name)
    except SpacyElmoError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1)
    typer.echo(f"{name}: {folder}")


@app.command("models")
def models_command() -> None:
    """List the bundled and the published models, their sizes, and whether each is cached."""
    from ..bilm.loading import BUNDLED_DIR, DEFAULT_MODEL, bundled_models
    from ..bilm.remote import PUBLISHED, cache_dir, is_cached, model_folder

    for name in bundled_models():
        size = sum(f.stat().st_size for f in (BUNDLED_DIR / name).iterdir()) / 1e6
        default = " (default)" if name == DEFAULT_MODEL else ""
        typer.echo(f"{name:<20} bundled{default}, {size:.1f} MB")
    for name, published in PUBLISHED.items():
        if is_cached(name):
            size = sum(f.stat().st_size for f in model_folder(name).iterdir()) / 1e6
            state = f"cached, {size:.1f} MB in {model_folder(name)}"
        else:
            state = f"not cached (about {published.parameters * 4 / 1e6:.0f} MB of float32 weights)"
        typer.echo(f"{name:<20} published, {published.parameters / 1e6:.1f} M parameters, {state}")
    typer.echo(f"cache folder: {cache_dir()} (set $SPACY_ELMO_CACHE to move it)")
