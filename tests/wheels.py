"""Build a spaCy pipeline's wheel with `spacy package` and install it, offline, into a fresh
virtual environment that sees this environment's packages (spaCy, torch, spacy-elmo) but not
the pipeline: what a user's `pip install` of the wheel gives. And, for commands run as a user
types them (docs/pipeline.md's packaging recipe): a fresh environment without spacy-elmo, and a
local folder of this environment's build requirements so that build isolation needs no network."""
import base64
import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path, PurePosixPath
from typing import Dict, Iterable, Set

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



# --- a fresh environment without spacy-elmo, and offline builds ----------------------------------

PURELIB = Path(sysconfig.get_paths()["purelib"])


def _top_level(distribution: importlib.metadata.Distribution) -> Set[str]:
    """The names a distribution installed at the top of its site-packages (its RECORD)."""
    return {PurePosixPath(path).parts[0] for path in distribution.files or () if not str(path).startswith("..")}


def venv_without(work: Path, *left_out: str) -> Path:
    """A fresh virtual environment (its own pip) that sees this environment's packages except the
    distributions `left_out` (e.g. "spacy-elmo"): a user's environment that has spacy-elmo's
    dependencies (spaCy, torch) and not spacy-elmo. The packages are seen through a folder of
    links to this site-packages, a plain sys.path entry: its .pth files (an editable install) do
    not apply. Returns the folder of the environment."""
    venv = work / "venv"
    run(sys.executable, "-m", "venv", str(venv))
    python = venv / "bin" / "python"
    hidden = {"pip"} | {canonical(name) for name in left_out}
    hide = set()
    for distribution in importlib.metadata.distributions(path=[str(PURELIB)]):
        if canonical(distribution.metadata["Name"]) in hidden:
            hide |= _top_level(distribution)
    links = work / "outer-site-packages"
    links.mkdir()
    for entry in PURELIB.iterdir():
        if entry.name not in hide and entry.suffix != ".pth":
            (links / entry.name).symlink_to(entry)
    site = Path(run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    (site / "outer.pth").write_text(f"{links}\n")
    return venv


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_of_installed(name: str, folder: Path) -> Path:
    """The wheel of an installed pure-Python distribution (setuptools, wheel), packed again from
    this environment's files: what build isolation installs offline (PIP_FIND_LINKS=folder)."""
    (distribution,) = importlib.metadata.distributions(name=name, path=[str(PURELIB)])
    (record,) = [path for path in distribution.files if path.name == "RECORD" and path.parent.suffix == ".dist-info" and len(path.parts) == 2]
    info = record.parent.as_posix()
    tags = [line.split(":", 1)[1].strip() for line in distribution.read_text("WHEEL").splitlines() if line.startswith("Tag:")]
    assert tags == ["py3-none-any"], f"{name}: not a pure-Python wheel ({tags})"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{canonical(name).replace('-', '_')}-{distribution.version}-py3-none-any.whl"
    rows = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in distribution.files:
            relative = path.as_posix()
            skipped = f"{info}/INSTALLER", f"{info}/REQUESTED", f"{info}/direct_url.json", f"{info}/RECORD"
            if relative.startswith("..") or "__pycache__" in path.parts or relative in skipped:
                continue
            data = Path(distribution.locate_file(path)).read_bytes()
            archive.writestr(relative, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append(f"{relative},sha256={digest},{len(data)}")
        archive.writestr(f"{info}/RECORD", "\n".join(rows + [f"{info}/RECORD,,"]) + "\n")
    return wheel


def wheels_of_installed(names: Iterable[str], folder: Path) -> Path:
    """`folder` with the wheels of these installed distributions and of what they require (markers
    applied, no extras), packed again from this environment: a local index for build isolation."""
    from packaging.requirements import Requirement

    todo, done = [canonical(name) for name in names], set()
    while todo:
        name = todo.pop()
        if name in done:
            continue
        done.add(name)
        wheel_of_installed(name, folder)
        (distribution,) = importlib.metadata.distributions(name=name, path=[str(PURELIB)])
        for line in distribution.requires or ():
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(canonical(requirement.name))
    return folder


def offline_environment(venv: Path, wheelhouse: Path) -> Dict[str, str]:
    """The environment of commands typed in `venv` (activated) with no network: pip reads no
    configuration file, asks no index, and finds build requirements in `wheelhouse`."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    outer_bin = str(Path(sys.executable).parent)
    path = [entry for entry in env.get("PATH", "").split(os.pathsep) if entry and entry != outer_bin]
    env.update(
        PATH=os.pathsep.join([str(venv / "bin"), *path]),
        VIRTUAL_ENV=str(venv),
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheelhouse),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env
