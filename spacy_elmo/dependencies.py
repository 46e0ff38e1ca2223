"""The optional dependencies and the one-line error where one is missing: PyTorch (the `torch`
extra: the biLM, training, export), ONNX Runtime (the `onnx` extra: runtime "onnxruntime") and
scorch (the `scoring` extra: scoring coreference).
No torch here: the check must work where it is missing."""
from importlib import import_module

from .errors import SpacyElmoError

# module: (what it is called in messages, the extra that installs it)
OPTIONAL = {
    "torch": ("PyTorch", "torch"),
    "onnxruntime": ("ONNX Runtime", "onnx"),
    "onnx": ("the onnx package", "onnx"),
    "scorch": ("scorch (the CoNLL-2012 coreference metrics)", "scoring"),
}


class MissingDependency(SpacyElmoError, ImportError):
    """Something needs an optional dependency that is not installed; the message names the extra."""


def require(module: str, what: str) -> None:
    """Raise a MissingDependency, one line naming the extra to install, unless `module` imports.

    module (str): "torch", "onnxruntime", "onnx" or "scorch".
    what (str): what needs it, as the message's subject (e.g. 'runtime "onnxruntime"').
    """
    try:
        import_module(module)
    except ImportError:
        name, extra = OPTIONAL[module]
        raise MissingDependency(f"{what} needs {name}: pip install 'spacy-elmo[{extra}]'") from None

