"""`python -m spacy_elmo init-config`: spaCy's `init config`, with the ELMo listener wired in.

spaCy's own `init config --pipeline elmo,ner` would give NER a plain tok2vec, so the biLM would
run for nothing. Here every component that takes a `tok2vec` gets its own
`spacy-elmo.ElmoListener.v1` (its own layer mix, concatenated with spaCy's hash embeddings of
the token, then the CNN context encoder of spaCy's default tok2vec), listening to one shared,
frozen `elmo` component.
"""
import copy
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from ..errors import SpacyElmoError
from ..registry_names import ELMO_LISTENER
from .app import app

ELMO_NAME = "elmo"
# Scores that spaCy's default score weights list for a component that does not predict them (the
# tagger's scorer also reads POS), by the components that do.
SCORE_PREDICTED_BY = {"pos_acc": ("morphologizer", "attribute_ruler")}


@app.command("init-config")
def init_config_command(
    output: Path = typer.Argument(..., help="Config file to write ('-' for standard output)"),
    pipeline: str = typer.Option("ner", "--pipeline", "-p", help="Comma-separated components, as for spacy init config"),
    lang: Optional[str] = typer.Option(None, "--lang", "-l", help="spaCy language of the pipeline (default: the biLM's, else en)"),
    optimize: str = typer.Option("efficiency", "--optimize", help="efficiency or accuracy, as for spacy init config"),
    bilm: Optional[str] = typer.Option(
        None, help="The biLM: a bundled or published name (see the models command), a model folder or archive, or weights .hdf5 (default: bundled)"
    ),
    options: Optional[str] = typer.Option(None, help="options.json of a weights .hdf5"),
    force: bool = typer.Option(False, "--force", help="Overwrite OUTPUT if it exists"),
) -> None:
    """Write a complete training config with ELMo features wired into each component."""
    from ..bilm.loading import check_model_source
    from ..bilm.model_info import model_language, read_model_info
    from ..languages import check_language

    try:
        if str(output) != "-" and output.exists() and not force:
            raise SpacyElmoError(f"{output} exists; pass --force to overwrite it")
        check_model_source(bilm)
        card = read_model_info(bilm)
        lang = check_language(model_language(card, lang))
        config = elmo_config(pipeline.split(","), lang=lang, optimize=optimize, bilm=bilm, options=options)
    except SpacyElmoError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1)
    if card.get("lang") and card["lang"] != lang:
        typer.echo(f"warning: the pipeline's language is {lang!r}, but the biLM was trained on {card['lang']!r} text", err=True)
    text = config.to_str()
    if str(output) == "-":
        typer.echo(text)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf8")
        typer.echo(f"wrote {output}; train with: python -m spacy train {output} --paths.train TRAIN --paths.dev DEV")


def elmo_config(
    pipeline: List[str], *, lang: str = "en", optimize: str = "efficiency", bilm: Optional[str] = None, options: Optional[str] = None
) -> Any:
    """spaCy's default config for `pipeline`, with an `elmo` component in place of `tok2vec` and an
    ELMo listener as every component's tok2vec; filled with every default."""
    from spacy.cli.init_config import init_config
    from spacy.util import load_config_from_str

    components = [name.strip() for name in pipeline if name.strip() and name.strip() not in (ELMO_NAME, "tok2vec")]
    if not components:
        raise SpacyElmoError("--pipeline names no trainable component besides elmo (e.g. ner,tagger)")
    try:
        base = init_config(lang=lang, pipeline=components, optimize=optimize, gpu=False, pretraining=False, silent=True)
    except (KeyError, ValueError, SystemExit) as err:
        raise SpacyElmoError(f"spaCy cannot make a config for --pipeline {','.join(components)} --lang {lang}: {err}") from None
    config = copy.deepcopy(base)  # not interpolated: [corpora] keeps its ${paths} variables
    shared = config["components"].pop("tok2vec", None)
    encode = shared["model"]["encode"] if shared else {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": 96, "depth": 4, "window_size": 1, "maxout_pieces": 3}  # fmt: skip
    embed = shared["model"]["embed"] if shared else None
    for name in components:
        model = config["components"][name].get("model", {})
        if isinstance(model, dict) and "tok2vec" in model:
            model["tok2vec"] = _listener_tok2vec(encode, embed)
    config["components"] = {ELMO_NAME: _elmo_block(bilm, options), **config["components"]}
    config["nlp"]["pipeline"] = [ELMO_NAME, *components]
    filled = load_config_from_str(_fill(config))
    weights = filled["training"]["score_weights"]
    for score, predictors in SCORE_PREDICTED_BY.items():
        if score in weights and not set(predictors) & set(components):
            weights[score] = None  # no column stuck at 0.00 in training's table
    return filled


def _elmo_block(bilm: Optional[str], options: Optional[str]) -> Dict[str, Any]:
    from ..layers.elmo_model import ElmoModelSettings

    return {"factory": ELMO_NAME, "model": ElmoModelSettings(bilm=bilm, options=options).to_config()}


def _listener_tok2vec(encode: Dict[str, Any], embed: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    width = encode["width"]
    static = copy.deepcopy(embed) if embed else None
    if static is not None:
        static["width"] = width
    listener = {"@architectures": ELMO_LISTENER, "width": width, "upstream": ELMO_NAME, "static_embed": static}
    return {"@architectures": "spacy.Tok2Vec.v2", "embed": listener, "encode": copy.deepcopy(encode)}


def _fill(config: Dict[str, Any]) -> str:
    """The config with every default filled in, as `spacy init fill-config` writes it."""
    from spacy.util import get_lang_class
    from thinc.api import Config

    language = get_lang_class(config["nlp"]["lang"])
    return language.from_config(Config(config), auto_fill=True, validate=True).config.to_str()
