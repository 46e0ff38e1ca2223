"""Summarize training logs into a compact JSON record (the logs themselves stay out of the
repository, e.g. under the git-ignored logs/): per run, spaCy's table of evaluations on dev
(its columns and one row per evaluation), the figures of `/usr/bin/time -v` (wall clock, CPU,
peak RSS, exit status), the scores `evaluate_runs.py` printed for model-best, and, for a seed
that reused its tuning run, which one.

    python scripts/summarize_log.py docs/results/run-logs.json logs/queue/docs/results/train-ner-elmo-seed1.log

Each log is one entry of RECORD's "runs", named after its file (without `.log`, or `--name`);
an entry of the same name is replaced, the others are kept. `evidence_queue.sh` calls this after
each run and commits the record instead of the log.
"""

import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

app = typer.Typer(add_completion=False)

NOTE = (
    "Summaries of training logs (scripts/summarize_log.py); the logs are not kept in the repository. "
    "command: the command /usr/bin/time measured, else spaCy's training command; columns/evals: "
    "spaCy's table of dev evaluations, one row per evaluation (E = epoch, # = step); time: "
    "/usr/bin/time -v (seconds, peak RSS in KiB); scores: the model-best scores evaluate_runs.py "
    "printed (the test set of the run's record); reused: the tuning run whose model is this seed."
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")
HEADER = re.compile(r"^E\s+#\s+")
ROW = re.compile(r"^\s*\d+\s+\d+(\s+-?\d+(\.\d+)?)+\s*$")
TRAIN_COMMAND = re.compile(r"^[^:]+: (-m spacy train .*)$")
SCORES = re.compile(r"model-best: ((?:[\w.]+ -?[\d.]+(?:, )?)+)$")
REUSED = re.compile(r"^\(the training log of this run is the tuning log of (.+)\)$")
TIME_FIELDS = {
    "User time (seconds)": ("user_s", float),
    "System time (seconds)": ("system_s", float),
    "Percent of CPU this job got": ("cpu_percent", lambda v: int(v.rstrip("%"))),
    "Elapsed (wall clock) time (h:mm:ss or m:ss)": ("wall_s", lambda v: _clock_seconds(v)),
    "Maximum resident set size (kbytes)": ("peak_rss_kib", int),
    "Exit status": ("exit_status", int),
}


def _clock_seconds(value: str) -> float:
    seconds = 0.0
    for part in value.split(":"):
        seconds = seconds * 60 + float(part)
    return round(seconds, 2)


def _number(text: str) -> Any:
    return int(text) if re.fullmatch(r"-?\d+", text) else float(text)


def summarize(text: str) -> Dict[str, Any]:
    """The summary of one log's text (see the module's docstring)."""
    summary: Dict[str, Any] = {}
    columns: Optional[List[str]] = None
    evals: List[List[Any]] = []
    timed: Dict[str, Any] = {}
    for line in ANSI.sub("", text).splitlines():
        stripped = line.strip()
        if HEADER.match(stripped):
            columns = re.split(r"\s{2,}", stripped)
            evals = []  # a log with the table twice: the last one
            continue
        if columns and ROW.match(line) and len(line.split()) == len(columns):
            evals.append([_number(value) for value in line.split()])
            continue
        if stripped.startswith("Command being timed: "):
            summary["command"] = stripped[len("Command being timed: "):].strip('"')
            continue
        if ": " in stripped and stripped.rsplit(": ", 1)[0] in TIME_FIELDS:
            field, value = stripped.rsplit(": ", 1)
            key, parse = TIME_FIELDS[field]
            timed[key] = parse(value)
            continue
        match = TRAIN_COMMAND.match(stripped)
        if match and "command" not in summary:
            summary["train_command"] = match.group(1)
        match = SCORES.search(stripped)
        if match:
            summary["scores"] = {k: float(v) for k, v in (item.split(" ") for item in match.group(1).split(", "))}
        match = REUSED.match(stripped)
        if match:
            summary["reused"] = match.group(1)
    if "command" in summary:
        summary.pop("train_command", None)
    elif "train_command" in summary:
        summary["command"] = summary.pop("train_command")
    if columns and evals:
        summary["columns"], summary["evals"] = columns, evals
    if timed:
        summary["time"] = timed
    order = ("command", "reused", "columns", "evals", "time", "scores")
    return {key: summary[key] for key in order if key in summary}


def dumps(record: Dict[str, Any]) -> str:
    """RECORD as JSON, one line per field of a run and per evaluation: short diffs."""
    lines = ["{", f'  "note": {json.dumps(record.get("note", NOTE))},', '  "runs": {']
    runs = record.get("runs", {})
    for i, name in enumerate(sorted(runs)):
        run = runs[name]
        fields = []
        for key, value in run.items():
            if key == "evals":
                rows = ",\n".join(f"        {json.dumps(row)}" for row in value)
                fields.append(f'      "evals": [\n{rows}\n      ]')
            else:
                fields.append(f"      {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
        comma = "," if i < len(runs) - 1 else ""
        lines.append(f"    {json.dumps(name)}: {{\n" + ",\n".join(fields) + f"\n    }}{comma}")
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


@app.command()
def main(
    record: Path = typer.Argument(..., help="The JSON record to update (created if missing)"),
    logs: List[Path] = typer.Argument(..., help="Training logs"),
    name: Optional[str] = typer.Option(None, help="The entry's name (one log only; default: the file's name without .log)"),
) -> None:
    """Summarize LOGS into RECORD."""
    if name and len(logs) > 1:
        raise SystemExit("error: --name names one log")
    data = json.loads(record.read_text(encoding="utf8")) if record.is_file() else {}
    runs = data.setdefault("runs", {})
    for log in logs:
        key = name or (log.name[: -len(".log")] if log.name.endswith(".log") else log.name)
        runs[key] = summarize(log.read_text(encoding="utf8", errors="replace"))
    data["note"] = NOTE
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(dumps(data), encoding="utf8")
    print(f"{record}: {len(logs)} log(s) summarized, {len(runs)} run(s)")


if __name__ == "__main__":
    app()
