"""spacy-elmo: ELMo contextual embeddings for spaCy v3 pipelines."""
from typing import Any, Optional

from .about import __version__
from .paths import PathLike

__all__ = ["learned_mixes", "load_bilm", "__version__"]


def load_bilm(source: Optional[PathLike] = None, *, runtime: str = "torch", **settings: Any) -> Any:
    """Load a biLM to run on `runtime` (its loader is imported lazily, to keep `import spacy` cheap).

    source (Optional[PathLike]): the model; None for the default bundled one.
    runtime (str): "torch": the PyTorch `BiLM`, as `spacy_elmo.bilm.load_bilm` loads it (settings
        `options`, `device`, `compute_dtype`); "onnxruntime": an `OnnxBiLM` on ONNX Runtime, as
        `spacy_elmo.onnx.loading.load_onnx_bilm` loads it (settings `options`, `device`,
        `compute_dtype` float32 or int8, `threads`; source may be an exported .onnx graph).
    RETURNS (Any): a `BiLM` in eval mode, or an `OnnxBiLM`.
    """
    from .dependencies import require
    from .runtime import check_runtime

    if check_runtime(runtime) == "torch":
        from .bilm import load_bilm as load_torch_bilm

        return load_torch_bilm(source, **settings)
    require("onnxruntime", 'load_bilm on runtime "onnxruntime"')
    from .onnx.loading import load_onnx_bilm

    return load_onnx_bilm(source, **settings)


def learned_mixes(nlp: Any) -> Any:
    """The layer mix each component of a trained pipeline learned; see
    `spacy_elmo.layers.layer_mix.learned_mixes`."""
    from .layers.layer_mix import learned_mixes as _learned_mixes

    return _learned_mixes(nlp)
