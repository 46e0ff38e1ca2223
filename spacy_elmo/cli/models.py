"""`python -m spacy_elmo download NAME` and `python -m spacy_elmo models`: the published weights."""
import typer

from ..errors import SpacyElmoError
from .app import app


@app.command("download")
def download_command(
    name: str = typer.Argument(..., help="A published model, e.g. elmo-small, efml-zh, nlpl-210 (see the models command)")
) -> None:
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
    """List the bundled and the published models: language, size, and whether each is cached."""
    from ..bilm.loading import BUNDLED_DIR, DEFAULT_MODEL, bundled_models
    from ..bilm.model_info import read_model_info
    from ..bilm.published import PUBLISHED
    from ..bilm.remote import cache_dir, is_cached, loadable_path

    for name in bundled_models():
        size = sum(f.stat().st_size for f in (BUNDLED_DIR / name).iterdir()) / 1e6
        default = " (default)" if name == DEFAULT_MODEL else ""
        lang = read_model_info(name).get("lang", "?")
        typer.echo(f"{name:<20} {lang:<4} bundled{default}, {size:.1f} MB")
    for name, model in PUBLISHED.items():
        parameters = f"{model.parameters / 1e6:.1f} M parameters" if model.parameters else "size unknown"
        if is_cached(name):
            folder = loadable_path(name)
            size = sum(f.stat().st_size for f in folder.iterdir() if f.is_file()) / 1e6
            state = f"cached, {size:.1f} MB in {folder}"
        else:
            state = f"not cached (about {model.parameters * 4 / 1e6:.0f} MB of float32 weights)" if model.parameters else "not cached"
        typer.echo(f"{name:<20} {model.lang:<4} published, {parameters}, {state}")
    typer.echo(f"cache folder: {cache_dir()} (set $SPACY_ELMO_CACHE to move it)")
