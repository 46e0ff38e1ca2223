"""scripts/summarize_log.py: a training log becomes a compact JSON entry (dev evaluations,
/usr/bin/time -v, scores), merged into a record; the committed records hold what the docs cite."""
import json
import subprocess
import sys
from pathlib import Path

from . import load_script

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "summarize_log.py"
summarize_log = load_script("summarize_log")

LOG = """seed 1: -m spacy train configs/ner.cfg --output training/ner-elmo/seed1 --system.seed 1
\x1b[38;5;4mℹ Initial learn rate: 0.001\x1b[0m
E    #       LOSS ELMO  LOSS NER  ENTS_F  ENTS_P  ENTS_R  SCORE 
---  ------  ---------  --------  ------  ------  ------  ------
  0       0       0.00     35.29    0.00    0.00    0.00    0.00
  0     200       0.00   1455.54   39.49   51.59   31.99    0.39
  1    1200       0.00   1237.82   60.43   74.51   50.83    0.60
\x1b[38;5;2m✔ Saved pipeline to output directory\x1b[0m
\tCommand being timed: ".venv/bin/python scripts/train_seeds.py configs/ner.cfg training/ner-elmo --seeds 1"
\tUser time (seconds): 474.69
\tSystem time (seconds): 27.72
\tPercent of CPU this job got: 97%
\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:08:36.77
\tMaximum resident set size (kbytes): 1604376
\tMinor (reclaiming a frame) page faults: 15965735
\tExit status: 0
training/ner-elmo/seed1/model-best: ents_p 0.7413, ents_r 0.5846, ents_f 0.6536
"""


def test_a_log_becomes_its_evaluations_time_and_scores():
    summary = summarize_log.summarize(LOG)
    assert summary == {
        "command": ".venv/bin/python scripts/train_seeds.py configs/ner.cfg training/ner-elmo --seeds 1",
        "columns": ["E", "#", "LOSS ELMO", "LOSS NER", "ENTS_F", "ENTS_P", "ENTS_R", "SCORE"],
        "evals": [
            [0, 0, 0.0, 35.29, 0.0, 0.0, 0.0, 0.0],
            [0, 200, 0.0, 1455.54, 39.49, 51.59, 31.99, 0.39],
            [1, 1200, 0.0, 1237.82, 60.43, 74.51, 50.83, 0.6],
        ],
        "time": {"user_s": 474.69, "system_s": 27.72, "cpu_percent": 97, "wall_s": 4116.77, "peak_rss_kib": 1604376, "exit_status": 0},
        "scores": {"ents_p": 0.7413, "ents_r": 0.5846, "ents_f": 0.6536},
    }
    reused = "(the training log of this run is the tuning log of training/tune/ner/dropout=0.1_depth=4)\n"
    assert summarize_log.summarize(reused) == {"reused": "training/tune/ner/dropout=0.1_depth=4"}
    # Without /usr/bin/time: spaCy's own command line names the run.
    assert summarize_log.summarize(LOG.split("\tCommand")[0])["command"].startswith("-m spacy train configs/ner.cfg")


def test_the_record_keeps_other_runs_and_replaces_one_of_the_same_name(tmp_path):
    record, log = tmp_path / "run-logs.json", tmp_path / "train-ner-elmo-seed1.log"
    log.write_text(LOG, encoding="utf8")
    record.write_text(json.dumps({"runs": {"other": {"reused": "x"}, "train-ner-elmo-seed1": {"reused": "old"}}}))
    done = subprocess.run([sys.executable, str(SCRIPT), str(record), str(log)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    data = json.loads(record.read_text(encoding="utf8"))
    assert set(data["runs"]) == {"other", "train-ner-elmo-seed1"} and data["runs"]["other"] == {"reused": "x"}
    assert data["runs"]["train-ner-elmo-seed1"]["evals"][-1][1] == 1200 and data["note"]
    assert record.read_text(encoding="utf8").count("\n") < 30  # one line per evaluation, not per number


def test_the_committed_records_hold_what_the_docs_cite():
    runs = json.loads((REPO / "docs" / "results" / "run-logs.json").read_text(encoding="utf8"))["runs"]
    # docs/results.md: float32 en_base, NER seed 0: step 200 at 37.48, best dev F1 63.48.
    fp32 = {row[1]: row[runs["fp32-ner-seed0"]["columns"].index("ENTS_F")] for row in runs["fp32-ner-seed0"]["evals"]}
    assert fp32[200] == 37.48 and max(fp32.values()) == 63.48
    # docs/coreference.md: wall clock of the baseline's seed 0, 54:05.
    assert round(runs["train-coref-baseline-seed0"]["time"]["wall_s"]) == 54 * 60 + 5
    v2 = json.loads((REPO / "docs" / "results" / "en_base_v2" / "run-logs.json").read_text(encoding="utf8"))["runs"]
    # docs/vectors.md: en_base_v2's 16 timed runs took 6.7 h.
    timed = [run["time"]["wall_s"] for run in v2.values() if "time" in run]
    assert len(timed) == 16 and round(sum(timed) / 3600, 1) == 6.7
