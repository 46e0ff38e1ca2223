"""Import every command module so that its commands register on the app, then run it."""
from . import convert, convert_corpus, embed, evaluate, export_onnx, init_config, models, pretrain, upgrade_config  # noqa: F401  (register the commands)
from . import set_runtime  # noqa: F401  (registers set-runtime)
from .app import app


def main() -> None:
    """Run the command line interface."""
    app()
