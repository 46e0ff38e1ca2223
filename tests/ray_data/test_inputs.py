"""The input files' rows, read in this process (no Ray cluster): paths and globs, a row per line
of text and JSONL (gzipped or not) or per Parquet row, each keeping its source and line, and a
problem instead of text where a line has none (reading them on a local Ray: test_ray_data.py)."""
import gzip
import io
import json

import pytest

pytest.importorskip("ray", reason="the ray extra is not installed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from spacy_elmo.errors import SpacyElmoError  # noqa: E402
from spacy_elmo.ray_data.inputs import _FileRows, expand_paths  # noqa: E402


def rows(path, data, text_column="text"):
    """(line, text, problem) of each row of a file, checking that every row names its source."""
    out = _FileRows(text_column)({"path": path, "bytes": data})
    assert all(row["source"] == path for row in out)
    return [(row["line"], row["text"], row["problem"]) for row in out]


def parquet_bytes(table):
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_globs_expand_sorted_and_paths_are_checked_but_remote_ones_kept(tmp_path):
    for name in ("b.txt", "a.txt", "sub/c.txt", "notes.md"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x\n", encoding="utf8")
    assert expand_paths([str(tmp_path / "*.txt")]) == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    assert expand_paths([str(tmp_path / "**" / "*.txt")])[-1] == str(tmp_path / "sub" / "c.txt")
    given = [str(tmp_path / "notes.md"), "s3://bucket/part-*.txt", str(tmp_path / "a.txt")]
    assert expand_paths(given) == given
    with pytest.raises(SpacyElmoError, match=r"no input file matches '.*\*\.jsonl'"):
        expand_paths([str(tmp_path / "*.jsonl")])
    with pytest.raises(SpacyElmoError, match="input file not found: .*missing.txt"):
        expand_paths([str(tmp_path / "a.txt"), str(tmp_path / "missing.txt")])


def test_text_lines_are_stripped_and_numbered_and_bad_bytes_keep_their_place():
    data = b"  first line \n\n\xff\xfe bad\nlast, no newline"
    assert rows("in.txt", data) == [
        (0, "first line", None),
        (1, "", None),  # empty: left for the embedder to name
        (2, None, "not UTF-8"),
        (3, "last, no newline", None),
    ]
    assert rows("in.txt", b"one\ntwo\n") == [(0, "one", None), (1, "two", None)]  # no row after the last newline
    assert rows("empty.txt", b"") == []


@pytest.mark.parametrize("name", ["in.txt.gz", "IN.TXT.GZ"])
def test_gzipped_files_are_read_whether_or_not_ray_unpacked_them(name):
    packed = gzip.compress(b"zipped line\nsecond\n")
    expected = [(0, "zipped line", None), (1, "second", None)]
    assert rows(name, packed) == expected
    assert rows(name, gzip.decompress(packed)) == expected


def test_jsonl_rows_take_the_text_column_or_say_why_not():
    lines = [{"body": " json line "}, {"body": 5}, {"text": "other column"}, ["not", "an", "object"]]
    data = "\n".join(json.dumps(line) for line in lines).encode("utf8") + b"\n{broken\n\xff\n"
    assert rows("in.jsonl", data, text_column="body") == [
        (0, "json line", None),
        (1, None, "not a string"),
        (2, None, "not a string"),
        (3, None, "not a string"),
        (4, None, "not JSON"),
        (5, None, "not UTF-8"),
    ]
    assert rows("in.ndjson.gz", gzip.compress(b'{"text": "packed"}\n')) == [(0, "packed", None)]


def test_parquet_rows_read_the_text_column_and_a_missing_column_is_named():
    data = parquet_bytes(pa.table({"id": [1, 2, 3], "text": [" a row ", None, "last"]}))
    assert rows("rows.parquet", data) == [(0, "a row", None), (1, None, "not a string"), (2, "last", None)]
    assert rows("ROWS.PQ", data) == rows("rows.parquet", data)
    with pytest.raises(SpacyElmoError, match=r"rows.parquet: no column 'body' \(columns: id, text\)"):
        rows("rows.parquet", data, text_column="body")
