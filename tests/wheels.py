"""Build a spaCy pipeline's wheel with `spacy package` and install it, offline, into a fresh
virtual environment that sees this environment's packages (spaCy, torch, spacy-elmo) but not
the pipeline: what a user's `pip install` of the wheel gives."""
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(*command: str, cwd: Path = REPO) -> str:
    """Run a command; its stdout, or a failed assertion with the end of its output."""
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(command)}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def build_wheel(pipeline: Path, work: Path) -> Path:
    """The wheel of a pipeline folder (spaCy's own packaging, built without network)."""
    meta = json.loads((pipeline / "meta.json").read_text(encoding="utf8"))
    meta_name = f"{meta['lang']}_{meta['name']}-{meta['version']}"
    (work / "packages").mkdir()
    run(sys.executable, "-m", "spacy", "package", str(pipeline), str(work / "packages"), "--build", "none", "--force")
    package_dir = work / "packages" / meta_name
    run(sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-q", "-w", str(work / "dist"), str(package_dir))
    (wheel,) = (work / "dist").glob(f"{meta_name}-*.whl")
    return wheel


def install_offline(wheel: Path, work: Path) -> Path:
    """The python of a fresh virtual environment with the wheel installed (no index, no deps)."""
    venv = work / "venv"
    run(sys.executable, "-m", "venv", str(venv))
    python = venv / "bin" / "python"
    site = Path(run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    # addsitedir, not a bare path: the outer site's own .pth files (an editable spacy-elmo) apply too.
    (site / "outer.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    run(str(python), "-m", "pip", "install", "--no-index", "--no-deps", "-q", str(wheel))
    return python

