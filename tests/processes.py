"""Tests that start processes never wait for ever: each child runs in a process group of its own,
and on timeout the whole group (the workers it forked included) is killed and the test fails."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np
import pytest

# Load a saved pipeline, optionally run it once in this process (a warm parent), then run it
# with `nlp.pipe(n_process=2)` and save each doc's `doc._.elmo`.
PIPE_SCRIPT = """
import json, sys
import numpy as np
import spacy

nlp = spacy.load(sys.argv[1])
texts = json.loads(sys.argv[2])
if sys.argv[4] == "warm":
    list(nlp.pipe(texts))
docs = list(nlp.pipe(texts, n_process=2, batch_size=4))
np.savez(sys.argv[3], *[doc._.elmo for doc in docs])
"""


def run_bounded(
    command: Sequence[str], what: str, timeout: float, cwd: Optional[Path] = None, env: Optional[Dict[str, str]] = None
) -> subprocess.CompletedProcess:
    """Run `command` (described as `what`); past `timeout` seconds, kill its process group and
    fail the test, with the end of what it printed."""
    process = subprocess.Popen(
        list(command), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"{what} did not finish in {timeout} s (its process group was killed); stderr ends: {stderr[-2000:]}")
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def pipe_in_two_processes(
    pipeline: Path, texts: List[str], warm: bool, python: str = sys.executable, env: Optional[Dict[str, str]] = None, timeout: float = 90
) -> List[np.ndarray]:
    """`doc._.elmo` of each text from the saved `pipeline` run with `n_process=2` in a new
    process (`warm`: the parent ran the pipeline before forking its workers)."""
    output = pipeline.parent / f"two-processes-{'warm' if warm else 'cold'}.npz"
    command = [python, "-c", PIPE_SCRIPT, str(pipeline), json.dumps(texts), str(output), "warm" if warm else "cold"]
    what = f"nlp.pipe(n_process=2) with a {'warm' if warm else 'cold'} parent"
    result = run_bounded(command, what, timeout, cwd=pipeline.parent, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    with np.load(output) as arrays:
        return [arrays[f"arr_{i}"] for i in range(len(texts))]
