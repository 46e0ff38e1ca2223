"""`embed --engine ray`, `embed_dataset` and `pipe_dataset` on a local Ray of 2 CPUs (the `ray` extra).

(The modules' parts that need no running Ray: test_embed.py, test_inputs.py, test_output.py,
test_pipe.py, test_resources.py and test_run.py.)"""
import gzip
import json
import os
import signal
import threading
import time

import h5py
import numpy as np
import pytest
from typer.testing import CliRunner

ray = pytest.importorskip("ray", reason="the ray extra is not installed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from spacy_elmo.cli.app import app  # noqa: E402
from spacy_elmo.cli.main import main  # noqa: E402,F401  (registers the commands)
from spacy_elmo.layers.elmo_model import ElmoModelSettings  # noqa: E402
from spacy_elmo.embed.lines import LineEmbedder  # noqa: E402
from spacy_elmo.embed.settings import EmbedSettings  # noqa: E402
from spacy_elmo.ray_data import embed_dataset, embed_files, pipe_dataset, read_embeddings  # noqa: E402

from .helpers import model_args  # noqa: E402

FIRST = ["The cat sat on the mat.", "A second line, with more words.", "The cat sat on the mat."]
SECOND = ["Colorless green ideas sleep furiously.", "Short one.", "We don't know where it went."]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def embed_settings(files, model=None, **settings):
    weights, options = files
    return EmbedSettings(model=ElmoModelSettings(bilm=str(weights), options=str(options), **(model or {})), **settings)


def rows_by_line(folder):
    """{(file name, line): (tokens, array)}, failing on a line seen twice."""
    rows = {}
    for source, line, tokens, array in read_embeddings(folder):
        key = (os.path.basename(source), line)
        assert key not in rows, f"{key} written twice"
        rows[key] = (tokens, array)
    return rows


def test_ray_engine_equals_the_local_engine_row_by_row(allennlp_model_files, tmp_path):
    for name, lines in (("first.txt", FIRST), ("second.txt", SECOND)):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf8")
        local = CliRunner().invoke(app, ["embed", str(tmp_path / name), "-o", str(tmp_path / f"{name}.hdf5"), *model_args(allennlp_model_files)])
        assert local.exit_code == 0, local.output
    args = ["embed", str(tmp_path / "*.txt"), "-o", str(tmp_path / "out"), "--engine", "ray", "--workers", "2", "--batch-size", "2", "--block-rows", "2"]
    result = CliRunner().invoke(app, args + model_args(allennlp_model_files))
    assert result.exit_code == 0, result.output
    assert "embedded 6 rows" in result.output and str(tmp_path / "out") in result.output
    rows = rows_by_line(tmp_path / "out")
    assert sorted(rows) == [(name, i) for name in ("first.txt", "second.txt") for i in range(3)]
    for name in ("first.txt", "second.txt"):
        with h5py.File(tmp_path / f"{name}.hdf5", "r") as expected:
            for i in range(3):
                tokens, array = rows[(name, i)]
                assert len(tokens) == expected[str(i)].shape[1]
                np.testing.assert_allclose(array, expected[str(i)][()], rtol=1e-5, atol=1e-5)


def test_bad_rows_are_kept_and_counted_with_their_source_and_line(allennlp_model_files, tmp_path):
    (tmp_path / "text.txt").write_bytes(b"good line\n\n\xff\xfe not utf-8\nlast line\n")
    records = [{"text": "json line"}, {"text": 5}, {"other": "x"}, "not an object"]
    (tmp_path / "records.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n{broken\n", encoding="utf8")
    with gzip.open(tmp_path / "packed.txt.gz", "wt", encoding="utf8") as handle:
        handle.write("zipped line\n")
    pq.write_table(pa.table({"text": ["parquet row", None]}), tmp_path / "rows.parquet")
    inputs = [str(tmp_path / name) for name in ("text.txt", "records.jsonl", "packed.txt.gz", "rows.parquet")]
    summary = embed_files(inputs, str(tmp_path / "out"), embed_settings(allennlp_model_files, {"batch_size": 2}))
    problems = {(os.path.basename(source), line): problem for source, line, problem in summary["problems"]}
    assert problems == {
        ("text.txt", 1): "empty",
        ("text.txt", 2): "not UTF-8",
        ("records.jsonl", 1): "not a string",
        ("records.jsonl", 2): "not a string",
        ("records.jsonl", 3): "not a string",
        ("records.jsonl", 4): "not JSON",
        ("rows.parquet", 1): "not a string",
    }
    rows = rows_by_line(tmp_path / "out")
    assert summary["rows"] == len(rows) == 4 + 5 + 1 + 2
    assert rows[("text.txt", 3)][0] == ["last", "line"] and rows[("packed.txt.gz", 0)][0] == ["zipped", "line"]
    assert rows[("rows.parquet", 0)][0] == ["parquet", "row"] and rows[("records.jsonl", 0)][0] == ["json", "line"]
    assert rows[("text.txt", 1)][1].shape == (3, 0, 32)


def test_embed_dataset_keeps_columns_and_selects_layers(allennlp_model_files):
    ds = ray.data.from_items([{"id": 7, "text": "The cat sat ."}, {"id": 8, "text": ""}])
    out = embed_dataset(ds, embed_settings(allennlp_model_files, tokenize="whitespace", layer="average", storage_dtype="float16"))
    rows = sorted(out.take_all(), key=lambda row: row["id"])
    assert [row["problem"] for row in rows] == [None, "empty"]
    embedder = LineEmbedder(embed_settings(allennlp_model_files, tokenize="whitespace"))
    (_, expected), = embedder(["The cat sat ."])
    array = np.frombuffer(rows[0]["vectors"], dtype=rows[0]["dtype"]).reshape(rows[0]["shape"])
    assert array.dtype == np.float16 and array.shape == (1, 4, 32)
    np.testing.assert_allclose(array[0], expected.mean(axis=0), rtol=1e-2, atol=1e-3)


def test_the_parquet_output_reads_with_pandas_alone(allennlp_model_files, tmp_path):
    pd = pytest.importorskip("pandas")
    (tmp_path / "in.txt").write_text("one two\nthree\n", encoding="utf8")
    embed_files([str(tmp_path / "in.txt")], str(tmp_path / "out"), embed_settings(allennlp_model_files))
    frame = pd.read_parquet(tmp_path / "out").sort_values("line")
    assert list(frame["line"]) == [0, 1] and list(frame["text"]) == ["one two", "three"]
    row = frame.iloc[0]
    array = np.frombuffer(row["vectors"], dtype=row["dtype"]).reshape(row["shape"])
    assert array.shape == (3, 2, 32) and list(row["tokens"]) == ["one", "two"]


def test_a_model_that_cannot_load_fails_once_with_the_loaders_message(allennlp_model_files, tmp_path):
    _, options = allennlp_model_files
    (tmp_path / "in.txt").write_text("a b\n", encoding="utf8")
    args = ["embed", str(tmp_path / "in.txt"), "-o", str(tmp_path / "out"), "--engine", "ray", "--model", str(tmp_path / "nope.hdf5"), "--options", str(options)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].endswith("nope.hdf5: no such file or folder"), result.output


@pytest.mark.parametrize("name,message", [("missing.txt", "input file not found"), ("table.parquet", "no column 'text'")])
def test_bad_inputs_fail_with_one_message_naming_the_file(allennlp_model_files, tmp_path, name, message):
    pq.write_table(pa.table({"body": ["a b"]}), tmp_path / "table.parquet")
    args = ["embed", str(tmp_path / name), "-o", str(tmp_path / "out"), "--engine", "ray", *model_args(allennlp_model_files)]
    result = CliRunner().invoke(app, args)
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert result.exit_code == 1 and len(errors) == 1 and name in errors[0] and message in errors[0], result.output


def test_an_empty_input_gives_the_same_line_on_both_engines_and_writes_nothing(allennlp_model_files, tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    errors = []
    for engine, output in (("local", "out.hdf5"), ("ray", "out")):
        args = ["embed", str(tmp_path / "empty.txt"), "-o", str(tmp_path / output), "--engine", engine, *model_args(allennlp_model_files)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 1 and not (tmp_path / output).exists(), result.output
        errors.append([line for line in result.output.splitlines() if line.startswith("error: ")])
    assert errors[0] == errors[1] == [f"error: {tmp_path / 'empty.txt'} is empty: nothing to embed"]


def test_a_failed_run_says_one_line_and_leaves_no_folder_to_block_the_next(allennlp_model_files, tmp_path):
    weights, options = allennlp_model_files
    (tmp_path / "in.txt").write_text("a b\n", encoding="utf8")
    (tmp_path / "broken.hdf5").write_bytes(b"not an hdf5 file")  # found before Ray starts; fails in the workers
    args = ["embed", str(tmp_path / "in.txt"), "-o", str(tmp_path / "out"), "--engine", "ray", "--options", str(options)]
    result = CliRunner().invoke(app, [*args, "--model", str(tmp_path / "broken.hdf5")])
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert result.exit_code == 1 and len(errors) == 1 and "broken.hdf5" in errors[0], result.output
    assert not (tmp_path / "out").exists()
    rerun = CliRunner().invoke(app, [*args, "--model", str(weights)])
    assert rerun.exit_code == 0 and "embedded 1 rows" in rerun.output, rerun.output


def test_the_names_removed_in_0_3_are_gone(tmp_path):
    with pytest.raises(ImportError):
        import spacy_elmo.distributed  # noqa: F401  (now spacy_elmo.ray_data)
    ds = ray.data.from_items([{"text": "The cat sat ."}])
    with pytest.raises(TypeError, match="model"):
        embed_dataset(ds, model="en_base_v2")
    with pytest.raises(TypeError, match="layers"):
        embed_files([str(tmp_path / "in.txt")], str(tmp_path / "out"), layers="top")


@pytest.mark.slow
def test_a_killed_worker_loses_and_repeats_no_row(allennlp_model_files, tmp_path):
    lines = [f"line {i} says {' '.join(['word'] * (i % 17 + 1))} ." for i in range(400)]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf8")
    settings = embed_settings(allennlp_model_files, {"batch_size": 16}, tokenize="whitespace")
    run = {}

    def embed():
        run["summary"] = embed_files([str(tmp_path / "in.txt")], str(tmp_path / "out"), settings, block_rows=16, workers=2)

    before = _map_workers()
    thread = threading.Thread(target=embed)
    thread.start()
    worker = _new_map_worker(before, timeout=120)
    _wait_for(lambda: (tmp_path / "out").is_dir() and any((tmp_path / "out").iterdir()), timeout=120)
    assert thread.is_alive(), "the run ended before a worker could be killed"
    os.kill(worker, signal.SIGKILL)
    thread.join(timeout=300)
    assert run["summary"]["rows"] == len(lines)
    rows = rows_by_line(tmp_path / "out")
    assert sorted(rows) == [("in.txt", i) for i in range(len(lines))]
    embedder = LineEmbedder(settings)
    for i, (tokens, expected) in zip(range(0, len(lines), 37), embedder(lines[::37])):
        assert rows[("in.txt", i)][0] == tokens
        np.testing.assert_allclose(rows[("in.txt", i)][1], expected, rtol=1e-5, atol=1e-5)


def _map_workers():
    """The pids of the live Ray Data actor processes of this test's own Ray (descendants of this process)."""
    return {
        int(entry)
        for entry in os.listdir("/proc")
        if entry.isdigit() and b"MapWorker" in _read(f"/proc/{entry}/cmdline") and _is_descendant(int(entry))
    }


def _new_map_worker(before, timeout):
    found = []
    _wait_for(lambda: found.extend(_map_workers() - before) or found, timeout)
    return found[0]


def _is_descendant(pid):
    while pid > 1:
        fields = _read(f"/proc/{pid}/stat").rsplit(b")", 1)[-1].split()
        if len(fields) < 2 or fields[0] == b"Z":
            return False
        pid = int(fields[1])
        if pid == os.getpid():
            return True
    return False


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def _wait_for(condition, timeout):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_pipe_dataset_gives_the_entities_of_nlp_pipe(allennlp_model_files, tmp_path):
    from ..pipeline.test_training import TRAIN_DATA, ner_nlp, train

    nlp = ner_nlp(allennlp_model_files, static_embed=True)
    train(nlp, 30)
    nlp.to_disk(tmp_path / "ner")
    texts = [text for text, _ in TRAIN_DATA] + ["Alice and Bob like Paris.", "Nothing here."]
    expected = [[(e.start_char, e.end_char, e.label_, e.text) for e in doc.ents] for doc in nlp.pipe(texts)]
    assert any(expected)
    ds = ray.data.from_items([{"id": i, "text": text} for i, text in enumerate(texts)] + [{"id": 99, "text": None}])
    rows = sorted(pipe_dataset(ds, str(tmp_path / "ner"), annotations=["tokens"], vector=True, batch_size=2).take_all(), key=lambda r: r["id"])
    assert [[(e["start"], e["end"], e["label"], e["text"]) for e in row["entities"]] for row in rows[:-1]] == expected
    assert rows[0]["tokens"] == [t.text for t in nlp.make_doc(texts[0])] and len(rows[0]["vector"]) == 32
    assert rows[-1]["entities"] == [] and rows[-1]["vector"] is None


def test_the_core_package_and_the_cli_do_not_import_ray():
    import subprocess
    import sys

    code = "import sys, spacy_elmo, spacy_elmo.cli.main, spacy_elmo.embed.lines, spacy_elmo.embed.local; print('ray' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
