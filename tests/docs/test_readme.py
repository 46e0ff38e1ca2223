"""The README and docs/ say what is true: the set-up commands are CI's, the results tables are the
committed JSON's, the layout names every CLI command, the Python examples run, and every relative
link (and heading anchor) exists."""
import json
import re
import statistics
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
RESULTS = REPO / "docs" / "results"

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
CODE_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def markdown_files() -> List[Path]:
    return [README, *sorted((REPO / "docs").glob("*.md"))]


def code_blocks(path: Path, language: str) -> List[str]:
    return [body for lang, body in CODE_BLOCK.findall(path.read_text(encoding="utf8")) if lang == language]


def table_rows(text: str, first_cell: str) -> Dict[str, List[str]]:
    """Rows of the markdown table whose header starts with `first_cell`: first cell -> other cells."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_cell} |"))
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


# --- set-up ----------------------------------------------------------------------------------


def ci_steps() -> List[str]:
    """The commands of .ci/run's first environment that a user types (pip's quiet flags left out)."""
    steps = []
    for line in (REPO / ".ci" / "run").read_text().splitlines():
        if line.strip() == "deactivate":
            break
        if line.startswith(("python3 -m venv", "pip install", "python -m pytest")):
            steps.append(line.replace(" --quiet", "").replace(" --disable-pip-version-check", ""))
    return steps


def test_the_test_command_is_what_ci_runs():
    steps = ci_steps()
    assert steps[0] == "python3 -m venv .venv" and steps[-1] == "python -m pytest -q tests", steps
    assert steps[1].startswith("pip install torch==") and steps[2].startswith("pip install -e "), steps
    ci = (REPO / ".ci" / "run").read_text()
    assert "shared/data" in ci
    commands = [line for block in code_blocks(README, "bash") for line in block.splitlines() if "pytest" in line]
    assert commands, "README has no test command"
    command = commands[0]
    position = 0
    for step in steps:
        found = command.find(step, position)
        assert found >= 0, f"README's test command lacks {step!r} (after position {position})"
        position = found + len(step)
    assert "SPACY_ELMO_FIXTURES" not in command  # the fixtures are in the clone
    assert "SPACY_ELMO_DATA=../shared/data" in command


def test_the_run_command_installs_the_package_and_runs_the_component():
    command = code_blocks(README, "bash")[0]
    assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install -e . && python -c")
    assert "nlp.add_pipe('elmo')" in command


def test_the_readme_says_how_to_get_the_cpu_build_of_torch():
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in README.read_text(encoding="utf8")


def test_the_examples_make_their_data_and_write_where_git_ignores():
    lines = [line for block in code_blocks(README, "bash") for line in block.splitlines()]
    train = next(i for i, line in enumerate(lines) if line.startswith("python -m spacy train"))
    assert any("convert-corpus" in line and "train.spacy" in line for line in lines[:train]), "no way to make train.spacy"
    pretrain = next(line for line in lines if line.startswith("python -m spacy_elmo pretrain"))
    top_folder = pretrain.split()[4].split("/")[0]
    assert f"/{top_folder}/" in (REPO / ".gitignore").read_text().splitlines()


def test_the_readme_is_a_front_door():
    assert len(README.read_text(encoding="utf8").splitlines()) <= 200


# --- results ---------------------------------------------------------------------------------


def runs(name: str) -> List[dict]:
    return json.loads((RESULTS / f"{name}.json").read_text())["runs"]


def paired(baseline_name: str, elmo_name: str, score: str) -> Tuple[List[float], List[float]]:
    """A score per seed of the baseline and the ELMo runs, over the seeds both have."""
    baseline, elmo = runs(baseline_name), runs(elmo_name)
    seeds = sorted({r["seed"] for r in baseline} & {r["seed"] for r in elmo})
    by_seed = [{r["seed"]: r["scores"][score] for r in variant} for variant in (baseline, elmo)]
    return [by_seed[0][seed] for seed in seeds], [by_seed[1][seed] for seed in seeds]


def mean_sd(values: List[float]) -> str:
    return f"{100 * statistics.mean(values):.2f} ± {100 * statistics.stdev(values):.2f}"


# README row -> (baseline JSON, baseline + vectors JSON or None, ELMo JSON, score); the ELMo JSON
# of en_base is in docs/results/, en_base_v2's of the same name in docs/results/en_base_v2/.
HEADLINE = {
    "NER, UNER English-EWT": ("ner-baseline", "ner-baseline-vectors", "ner-elmo", "ents_f"),
    "NER, random 1,000 train sentences": (
        "ner-baseline-low-random", "ner-baseline-vectors-low-random", "ner-elmo-low-random", "ents_f"
    ),
    "UPOS, UD English-EWT": ("tagger-baseline", "tagger-baseline-vectors", "tagger-elmo", "tag_acc"),
    "coreference, GUM": ("coref-baseline", None, "coref-elmo", "coref_conll_f"),
}


def test_the_headline_results_are_the_committed_json():
    rows = table_rows(README.read_text(encoding="utf8"), "task (test set)")
    assert list(rows) == list(HEADLINE)
    for row, (baseline_name, vectors_name, elmo_name, score) in HEADLINE.items():
        columns = [baseline_name, vectors_name, elmo_name, f"en_base_v2/{elmo_name}"]
        values = [[r["scores"][score] for r in runs(name)] if name else None for name in columns]
        assert all(v is None or len(v) == 3 for v in values), f"{row}: seeds 0, 1, 2, as the README says"
        baseline, v2 = paired(baseline_name, f"en_base_v2/{elmo_name}", score)
        gain = 100 * (statistics.mean(v2) - statistics.mean(baseline))
        expected = [mean_sd(v) if v else "–" for v in values] + [f"{gain:+.2f}"]
        assert rows[row][1:] == expected, row


def test_the_tuning_table_is_the_committed_json():
    rows = table_rows((REPO / "docs" / "results.md").read_text(encoding="utf8"), "config")
    for variant, label in (("baseline", "baseline"), ("elmo", "ELMo")):
        ner = {tuple(r["setting"].values()): r["value"] for r in json.loads((RESULTS / "tune" / f"ner-{variant}.json").read_text())["runs"]}
        tagger = {tuple(r["setting"].values()): r["value"] for r in json.loads((RESULTS / "tune" / f"tagger-{variant}.json").read_text())["runs"]}
        values = [ner[("0.1", "2")], ner[("0.1", "4")], ner[("0.3", "2")], ner[("0.3", "4")], tagger[("0.1",)], tagger[("0.3",)]]
        best = {max(values[:4]), max(values[4:])}
        expected = [f"**{100 * v:.2f}**" if v in best else f"{100 * v:.2f}" for v in values]
        assert rows[label] == expected, label


# --- layout and examples ---------------------------------------------------------------------


def test_the_layout_names_every_command():
    typer = pytest.importorskip("typer")
    import spacy_elmo.cli.main  # noqa: F401  (registers the commands)
    from spacy_elmo.cli.app import app

    commands = set(typer.main.get_command(app).commands)
    text = " ".join(README.read_text(encoding="utf8").split())
    listed = re.search(r"`python -m spacy_elmo ((?:[a-z-]+ \| )+[a-z-]+)`", text)
    assert listed, "README's layout does not list the commands"
    assert {c.strip() for c in listed.group(1).split("|")} == commands


# Pages whose Python examples run offline as written (coreference.md's needs a trained pipeline).
RUNNABLE = [README, REPO / "docs" / "usage.md", REPO / "docs" / "allennlp.md"]


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda page: page.name)
def test_the_python_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pipelines").symlink_to(REPO / "pipelines")  # the committed pipeline, as in a clone
    blocks = code_blocks(page, "python")
    assert blocks
    for block in blocks:
        exec(compile(block, str(page), "exec"), {})


# --- links -----------------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set:
    text = CODE_BLOCK.sub("", path.read_text(encoding="utf8"))
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def links() -> List[Tuple[Path, str]]:
    found = []
    for page in markdown_files():
        text = CODE_BLOCK.sub("", page.read_text(encoding="utf8"))
        found += [(page, target) for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]
    return found


@pytest.mark.parametrize("page,target", links(), ids=lambda x: x.name if isinstance(x, Path) else x)
def test_relative_links_point_to_files_and_headings(page, target):
    path, _, anchor = target.partition("#")
    resolved = (page.parent / path).resolve() if path else page
    relative = resolved.relative_to(REPO).as_posix() if resolved.is_relative_to(REPO) else str(resolved)
    assert resolved.exists(), f"{page.name}: {target} does not exist"
    if anchor and resolved.suffix == ".md":
        assert anchor in anchors(resolved), f"{page.name}: no heading #{anchor} in {relative}"


@pytest.mark.slow
def test_the_training_recipe_runs_as_written(tmp_path: Path):
    """The README's training steps, from a clone beside ../shared, on 40 sentences and 2 steps."""
    import os
    import shlex
    import subprocess
    import sys

    data = Path(os.environ.get("SPACY_ELMO_DATA", REPO.parent / "shared" / "data"))
    if not (data / "ud-ewt").is_dir() or not (data / "uner-ewt").is_dir():
        pytest.skip(f"the treebanks are not at {data} (SPACY_ELMO_DATA)")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(data.resolve())
    clone = tmp_path / "clone"
    clone.mkdir()
    block = next(body for body in code_blocks(README, "bash") if "convert-corpus" in body)
    for line in block.strip().splitlines():
        command = shlex.split(line)
        assert command[:2] == ["python", "-m"], line
        if "convert-corpus" in command:
            command += ["--limit", "40"]
        if command[2] == "spacy" and command[3] == "train":
            command += ["--training.max_steps", "2", "--training.eval_frequency", "1"]
        result = subprocess.run([sys.executable, *command[1:]], cwd=clone, capture_output=True, text=True)
        assert result.returncode == 0, f"{line}\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
    assert (clone / "training" / "model-last" / "meta.json").is_file()


@pytest.mark.slow
def test_the_packaging_recipe_runs_as_written(tmp_path: Path):
    """docs/pipeline.md's packaging commands, as written, from a copy of a clone's files (no dist/
    yet), in a fresh virtual environment that has spacy-elmo's dependencies but not spacy-elmo,
    with no network: pip takes spacy-elmo from the wheel the recipe builds, the pipeline loads by
    name, and its wheel carries its LICENSE. Build isolation installs this environment's own
    setuptools and wheel, packed again into a local folder."""
    import importlib.metadata
    import shlex
    import shutil
    import zipfile

    from ..processes import run_bounded
    from ..wheels import offline_environment, run, venv_without, wheels_of_installed

    for needed in ("build", "setuptools", "wheel"):
        try:
            importlib.metadata.version(needed)
        except importlib.metadata.PackageNotFoundError:
            pytest.skip(f"{needed} is not installed here (the `test` extra has it), and the recipe is run offline")
    block = next(body for body in code_blocks(REPO / "docs" / "pipeline.md", "bash") if "spacy package" in body)
    clone = tmp_path / "clone"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for folder in ("spacy_elmo", "pipelines/en_elmo_web_base"):
        shutil.copytree(REPO / folder, clone / folder, ignore=ignore)
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(REPO / name, clone / name)
    wheelhouse = wheels_of_installed(["setuptools", "wheel"], tmp_path / "wheelhouse")
    venv = venv_without(tmp_path, "spacy-elmo")
    env = offline_environment(venv, wheelhouse)

    result = run_bounded(["bash", "-euxo", "pipefail", "-c", block], "docs/pipeline.md's packaging commands", 420, cwd=clone, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]
    assert "Falling back" not in output, output[-3000:]  # `python -m build` built it, not spaCy's fallback
    assert re.search(r"Successfully installed .*spacy-elmo-", output), output[-3000:]  # from dist/, by --find-links

    install = next(line for line in block.splitlines() if line.startswith("pip install") and ".whl" in line)
    wheel = clone / next(word for word in shlex.split(install) if word.endswith(".whl"))
    names = zipfile.ZipFile(wheel).namelist()
    licence = (REPO / "pipelines" / "en_elmo_web_base" / "LICENSE").read_text(encoding="utf8")
    in_wheel = [name for name in names if name.endswith("/LICENSE")]
    assert any(".dist-info/" in name for name in in_wheel), names
    assert all(zipfile.ZipFile(wheel).read(name).decode("utf8") == licence for name in in_wheel)
    words = " ".join(licence.split())
    assert all(credit in words for credit in ("CC BY-SA 4.0", "UD_English-EWT", "Universal NER English-EWT", "en_base_v2")), licence
    python = str(venv / "bin" / "python")
    where = "import spacy, spacy_elmo; nlp = spacy.load('en_elmo_web_base'); print(spacy_elmo.__file__, nlp.meta['license'])"
    loaded = run(python, "-c", where, cwd=tmp_path).split()
    assert loaded[0].startswith(str(venv)) and " ".join(loaded[1:]) == "CC BY-SA 4.0", loaded  # the installed wheels
