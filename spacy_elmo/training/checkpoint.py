"""Training checkpoints, written atomically: a step folder appears complete or not at all.

Layout of ``checkpoints/step-000001250/``: ``model/`` (native model folder with softmax and
vocabulary), ``optimizer.safetensors`` + ``optimizer.json``, ``state.safetensors`` (LSTM states
and random generators of every process) + ``state.json`` (step, tokens, data positions, …).
Everything is first written to a hidden temporary folder, flushed, then renamed into place.
"""

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional

import torch
from safetensors.torch import load_file, save_file

from ..bilm import BiLM, load_bilm, save_bilm
from .errors import TrainingSetupError

STEP_PREFIX = "step-"
TEMP_PREFIX = ".tmp-"


@dataclass
class Checkpoint:
    """What a training run needs to continue exactly."""

    bilm: BiLM
    state: Dict[str, Any]
    tensors: Dict[str, torch.Tensor]
    optimizer_tensors: Dict[str, torch.Tensor]
    optimizer_meta: Dict[str, Any]


def checkpoint_path(root: Path, step: int) -> Path:
    """The folder of the checkpoint of `step`: ``root/step-NNNNNNNNN``."""
    return root / f"{STEP_PREFIX}{step:09d}"


def write_checkpoint(root: Path, step: int, checkpoint: Checkpoint, keep: int) -> Path:
    """Write `checkpoint` as ``root/step-NNNNNNNNN`` and delete all but the `keep` newest."""
    root.mkdir(parents=True, exist_ok=True)
    final = checkpoint_path(root, step)
    temp = root / f"{TEMP_PREFIX}{final.name}"
    for leftover in root.glob(f"{TEMP_PREFIX}*"):  # from a process killed while writing
        shutil.rmtree(leftover, ignore_errors=True)
    try:
        save_bilm(checkpoint.bilm, temp / "model")
        save_file(checkpoint.optimizer_tensors, str(temp / "optimizer.safetensors"))
        _write_json(temp / "optimizer.json", checkpoint.optimizer_meta)
        save_file(checkpoint.tensors, str(temp / "state.safetensors"))
        _write_json(temp / "state.json", checkpoint.state)
        _flush(temp)
        os.replace(temp, final)
        _fsync_dir(root)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    for old in sorted(root.glob(f"{STEP_PREFIX}*"))[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def latest_checkpoint(root: Path) -> Optional[Path]:
    """The newest complete checkpoint under `root`; temporary leftovers are ignored."""
    steps = sorted(p for p in root.glob(f"{STEP_PREFIX}*") if p.is_dir())
    return steps[-1] if steps else None


def read_checkpoint(path: Path) -> Checkpoint:
    """Load a checkpoint folder written by `write_checkpoint`."""
    try:
        bilm = load_bilm(path / "model")
        return Checkpoint(
            bilm=bilm,
            state=json.loads((path / "state.json").read_text(encoding="utf8")),
            tensors=load_file(str(path / "state.safetensors")),
            optimizer_tensors=load_file(str(path / "optimizer.safetensors")),
            optimizer_meta=json.loads((path / "optimizer.json").read_text(encoding="utf8")),
        )
    except (OSError, ValueError) as err:
        raise TrainingSetupError(f"cannot read checkpoint {path}: {err}") from None


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data), encoding="utf8")


def _flush(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as file:
                os.fsync(file.fileno())
    for path in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
        _fsync_dir(path)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
