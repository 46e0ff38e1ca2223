"""Without torch, spaCy and spacy_elmo import, and every entry that needs torch says so in one
line naming the extra (a subprocess where `import torch` fails)."""
import json
import subprocess
import sys

import pytest

from spacy_elmo.dependencies import MissingDependency, require

TORCH = "needs PyTorch: pip install 'spacy-elmo[torch]'"

SCRIPT = """
import json, runpy, sys
sys.modules["torch"] = None  # `import torch` raises ImportError
import spacy
import spacy_elmo

def message(run):
    try:
        run()
    except ImportError as err:
        return str(err)
    return "no error"

def cli():
    sys.argv = ["spacy_elmo", "models"]
    try:
        runpy.run_module("spacy_elmo", run_name="__main__", alter_sys=True)
    except SystemExit as exit:
        return str(exit.code)

def export():
    from spacy_elmo.onnx import export_onnx

print(json.dumps({
    "load_bilm": message(spacy_elmo.load_bilm),
    "training": message(lambda: __import__("spacy_elmo.training")),
    "allennlp": message(lambda: __import__("spacy_elmo.allennlp")),
    "export_onnx": message(export),
    "component": message(lambda: spacy.blank("en").add_pipe("elmo")),
    "cli": cli(),
}))
"""


@pytest.mark.slow
def test_every_torch_entry_names_the_extra(tmp_path):
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "load_bilm": f"spacy_elmo.bilm (the biLM in PyTorch) {TORCH}",
        "training": f"spacy_elmo.training (pretraining the biLM) {TORCH}",
        "allennlp": f"spacy_elmo.allennlp (the AllenNLP ELMo modules) {TORCH}",
        "export_onnx": f"spacy_elmo.onnx.export_onnx {TORCH}",
        "component": f'elmo model: runtime "torch" {TORCH}',
        "cli": "1",  # the models command lists bundled biLMs through spacy_elmo.bilm
    }
    assert result.stderr.strip().splitlines()[-1] == f"error: spacy_elmo.bilm (the biLM in PyTorch) {TORCH}"


def test_require(monkeypatch):
    require("torch", "this")  # installed here: nothing raised
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(MissingDependency, match=r"^export needs the onnx package: pip install 'spacy-elmo\[onnx\]'$") as err:
        require("onnx", "export")
    assert isinstance(err.value, ImportError)
