"""The plugin's wheel ships the bundled models, so `spacy package` pipelines can require it."""
import subprocess
import sys
import zipfile
from pathlib import Path

from spacy_elmo.bilm.loading import BUNDLED_DIR, DEFAULT_MODEL, bundled_models

REPO = Path(__file__).resolve().parents[1]


def test_wheel_contains_the_bundled_model_files(tmp_path):
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(REPO)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = tmp_path.glob("spacy_elmo-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert DEFAULT_MODEL in bundled_models()
    for model in bundled_models():
        for path in (BUNDLED_DIR / model).iterdir():
            assert f"spacy_elmo/models/{model}/{path.name}" in names
    assert any(name.endswith("entry_points.txt") for name in names)
