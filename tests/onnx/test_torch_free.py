"""A pipeline saved with runtime "onnxruntime" loads and runs where torch is not installed.

The test builds that environment without the network: a new virtual environment (no pip) whose
site-packages links every entry of this environment's site-packages except torch's (the
package, its metadata, torchgen and functorch). There torch is absent as in a real install
without it: `import torch` fails, `find_spec("torch")` is None, no distribution named torch.
"""
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Dict

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from ..processes import pipe_in_two_processes  # noqa: E402
from .pipelines import TEXTS, elmo_pipeline, save_tiny_bilm  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="links the site-packages entries")]

# Top-level names of what the torch wheel installs (CUDA builds add nvidia-* and triton).
TORCH_NAMES = ("torch", "torchgen", "functorch", "triton", "nvidia")

SCRIPT = """
import importlib.metadata, importlib.util, json, sys
import numpy as np
import spacy

nlp = spacy.load(sys.argv[1])
docs = list(nlp.pipe(json.loads(sys.argv[2])))
np.savez(sys.argv[3], *[doc._.elmo for doc in docs])
report = {
    "torch_loaded": sorted(name for name in sys.modules if name.split(".")[0] == "torch"),
    "runner": type(nlp.get_pipe("elmo").bilm).__name__,
    "tags": [[token.tag_ for token in doc] for doc in docs],
    "torch_spec": importlib.util.find_spec("torch") is not None,
    "torch_distribution": any(d.metadata["Name"] == "torch" for d in importlib.metadata.distributions()),
}
try:
    import torch  # noqa: F401
    report["import_torch"] = "imported"
except ImportError as err:
    report["import_torch"] = type(err).__name__
print(json.dumps(report))
"""


def is_torch(name: str) -> bool:
    """Whether a site-packages entry belongs to torch's wheel."""
    return name.replace("-", "_").split("_")[0].split(".")[0].lower() in TORCH_NAMES


def torch_free_python(root: Path) -> Path:
    """The python of a new virtual environment that sees this one's packages but torch."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    for ours in sorted({Path(sysconfig.get_paths()[key]) for key in ("purelib", "platlib")}):
        theirs = root / ours.relative_to(sys.prefix)
        theirs.mkdir(parents=True, exist_ok=True)
        for entry in ours.iterdir():
            if not is_torch(entry.name) and entry.name != "__pycache__":
                (theirs / entry.name).symlink_to(entry)
    return root / ("Scripts" if os.name == "nt" else "bin") / "python"


def torch_free_env() -> Dict[str, str]:
    """This process's environment variables, but those that would point python at this environment."""
    return {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def test_a_saved_onnx_runtime_pipeline_runs_without_torch(tmp_path):
    nlp = elmo_pipeline(save_tiny_bilm(tmp_path / "tiny"), tagger=True)
    nlp.to_disk(tmp_path / "pipeline")
    docs = list(nlp.pipe(TEXTS))
    python = torch_free_python(tmp_path / "venv")
    env = torch_free_env()
    command = [str(python), "-c", SCRIPT, str(tmp_path / "pipeline"), json.dumps(TEXTS), str(tmp_path / "elmo.npz")]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {
        "torch_loaded": [],
        "runner": "OnnxBiLM",
        "tags": [[token.tag_ for token in doc] for doc in docs],
        "torch_spec": False,
        "torch_distribution": False,
        "import_torch": "ModuleNotFoundError",
    }
    with np.load(tmp_path / "elmo.npz") as saved:
        for i, doc in enumerate(docs):
            np.testing.assert_allclose(saved[f"arr_{i}"], doc._.elmo, rtol=0, atol=1e-6)


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_two_processes_equal_one_without_torch(tmp_path, warm):
    nlp = elmo_pipeline(save_tiny_bilm(tmp_path / "tiny"))
    nlp.to_disk(tmp_path / "pipeline")
    texts = TEXTS * 3
    python = str(torch_free_python(tmp_path / "venv"))
    two = pipe_in_two_processes(tmp_path / "pipeline", texts, warm, python=python, env=torch_free_env())
    for expected, got in zip((doc._.elmo for doc in nlp.pipe(texts)), two):
        np.testing.assert_array_equal(got, expected)


def test_commands_that_need_no_torch_run_without_it_and_the_others_say_so(tmp_path):
    python, env = str(torch_free_python(tmp_path / "venv")), torch_free_env()
    repo = Path(__file__).resolve().parents[2]

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([python, "-m", "spacy_elmo", *args], capture_output=True, text=True, cwd=repo, env=env, timeout=120)

    listed = cli("--help")
    assert listed.returncode == 0, listed.stderr
    assert all(name in listed.stdout for name in ("convert-corpus", "models", "pretrain", "embed", "set-runtime"))
    conllu = sorted((repo / "data" / "smoke" / "ud-ewt").glob("*.conllu*"))[0]
    converted = cli("convert-corpus", str(conllu), str(tmp_path / "corpus.spacy"))
    assert converted.returncode == 0, converted.stderr
    assert (tmp_path / "corpus.spacy").stat().st_size > 0
    refused = cli("pretrain", "runs/x", "text.txt")
    assert refused.returncode == 1
    assert refused.stderr.strip() == "error: python -m spacy_elmo pretrain needs PyTorch: pip install 'spacy-elmo[torch]'"
    for command in (["models"], ["embed", str(conllu), "--output", str(tmp_path / "x.hdf5")]):
        refused = cli(*command)
        assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert refused.stderr.startswith("error: ") and "pip install 'spacy-elmo[torch]'" in refused.stderr
