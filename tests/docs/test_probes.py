"""docs/probes.md gives both bundled models' linear probes as their committed JSON has them."""
import json
from pathlib import Path

from .test_readme import table_rows

DOCS = Path(__file__).resolve().parents[2] / "docs"
PROBES = {"en_base": DOCS / "probes.json", "en_base_v2": DOCS / "results" / "en_base_v2" / "probes.json"}


def test_the_probe_tables_are_the_committed_json():
    text = (DOCS / "probes.md").read_text(encoding="utf8")
    found = {name: json.loads(path.read_text()) for name, path in PROBES.items()}
    assert all(found[name]["model"] == name for name in PROBES)
    rows = table_rows(text, "features")
    for row, cells in rows.items():
        expected = [f"{100 * found[model]['scores'][task][row]:.2f}" for task in ("NER", "UPOS") for model in PROBES]
        assert cells == expected, row
    assert list(rows) == list(found["en_base"]["scores"]["NER"])
    mixes = table_rows(text, "task")
    assert list(mixes) == list(found["en_base"]["mixes"])
    for task, cells in mixes.items():
        assert cells == [", ".join(f"{w:.3f}" for w in found[model]["mixes"][task]) for model in PROBES], task
