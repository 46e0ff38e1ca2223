"""The repository a stranger clones: no tracked file over 1 MB outside the folders whose large
files are the point (the bundled biLMs, the reference fixtures, a shipped trained pipeline), no
tracked logs (a result keeps their summary as JSON: scripts/summarize_log.py), and one copy of
each model: the en_base_v2 run folder records the sha256 of the weights the package ships."""
import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import List

import pytest

REPO = Path(__file__).resolve().parents[1]
MAX_BYTES = 1_000_000
LARGE_FILES_ALLOWED = ("spacy_elmo/models/", "tests/fixtures/", "pipelines/")


def in_git_checkout() -> bool:
    return (REPO / ".git").exists()


def tracked_files() -> List[str]:
    if not in_git_checkout():
        pytest.skip("not a git checkout (an sdist or a copy of the tree)")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    done = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"git ls-files failed: {done.stderr.decode('utf8', 'replace').strip()}")
    return [name for name in done.stdout.decode("utf8").split("\0") if name]


def test_no_tracked_file_over_1_mb_outside_the_model_and_fixture_folders():
    large = []
    for name in tracked_files():
        path = REPO / name
        if name.startswith(LARGE_FILES_ALLOWED) or not path.is_file():  # deleted in the work tree
            continue
        if path.stat().st_size > MAX_BYTES:
            large.append(f"{name} ({path.stat().st_size:,} bytes)")
    assert not large, f"tracked files over 1 MB outside {', '.join(LARGE_FILES_ALLOWED)}: {', '.join(large)}"


def test_no_tracked_logs():
    logs = [name for name in tracked_files() if name.endswith(".log")]
    assert not logs, f"tracked logs (keep a summary as JSON: scripts/summarize_log.py): {', '.join(logs)}"


def test_the_en_base_v2_run_records_the_weights_the_package_ships():
    path = REPO / "pretraining" / "en_base_v2" / "weights.json"
    if not in_git_checkout() and not path.is_file():
        pytest.skip("pretraining/ is only in a git checkout")
    record = json.loads(path.read_text(encoding="utf8"))
    bundled = REPO / "spacy_elmo" / "models" / "en_base_v2"
    assert not (REPO / "pretraining" / "en_base_v2" / "model").exists()  # one copy: the package's
    assert {"model.safetensors", "vocab.txt"} <= set(record["files"])
    for name, entry in record["files"].items():
        assert (bundled / name).stat().st_size == entry["bytes"], name
        assert hashlib.sha256((bundled / name).read_bytes()).hexdigest() == entry["sha256"], name
    card = json.loads((bundled / "pretrain.json").read_text(encoding="utf8"))
    assert (card["steps"], card["tokens"]) == (record["card"]["steps"], record["card"]["tokens"])
