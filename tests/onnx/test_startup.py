"""Starting a saved ONNX Runtime pipeline cheaply: what it imports (docs/performance.md, ONNX Runtime)."""
import json
import subprocess
import sys

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from .pipelines import elmo_pipeline, save_tiny_bilm  # noqa: E402

# Loads a saved pipeline where `import torch` fails and prints the top-level modules it imported.
SCRIPT = """
import json, sys
sys.modules["torch"] = None
import spacy
nlp = spacy.load(sys.argv[1])
nlp("We saw a play .")
print(json.dumps(sorted({name.split(".")[0] for name, module in sys.modules.items() if module is not None})))
"""


@pytest.mark.slow
def test_a_saved_onnx_runtime_pipeline_imports_neither_torch_nor_the_export_libraries(tmp_path):
    nlp = elmo_pipeline(save_tiny_bilm(tmp_path / "tiny"))
    nlp.to_disk(tmp_path / "pipeline")
    command = [sys.executable, "-c", SCRIPT, str(tmp_path / "pipeline")]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    loaded = set(json.loads(result.stdout.strip().splitlines()[-1]))
    assert {"spacy_elmo", "onnxruntime"} <= loaded
    assert not loaded & {"torch", "onnx", "scipy", "pandas"}
