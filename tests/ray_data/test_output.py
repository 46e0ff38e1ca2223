"""The Parquet rows of `embed --engine ray`, without Ray: the vector columns and their arrays,
`read_embeddings` and `summarize` over a folder of Parquet files (written here with pyarrow;
the folders a Ray run writes: test_ray_data.py)."""
import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from spacy_elmo.ray_data.output import VECTOR_COLUMNS, read_embeddings, summarize, to_array, vector_columns  # noqa: E402

RNG = np.random.default_rng(0)
ROWS = [(["a", "b"], RNG.standard_normal((3, 2, 4))), ([], np.zeros((3, 0, 4))), (["c"], RNG.standard_normal((3, 1, 4)))]


def write_part(path, sources, lines, problems, rows, dtype="float32"):
    columns = {"source": pa.array(sources), "line": pa.array(lines, type=pa.int64()), "problem": pa.array(problems, type=pa.string())}
    pq.write_table(pa.table({**columns, **vector_columns(rows, dtype)}), path)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_vector_columns_give_back_each_rows_array(dtype):
    columns = vector_columns(ROWS, dtype)
    assert sorted(columns) == sorted(VECTOR_COLUMNS)
    assert columns["tokens"].to_pylist() == [["a", "b"], [], ["c"]]
    assert columns["shape"].to_pylist() == [[3, 2, 4], [3, 0, 4], [3, 1, 4]]
    assert columns["dtype"].to_pylist() == [dtype] * 3
    for (_, layers), shape, vectors in zip(ROWS, columns["shape"].to_pylist(), columns["vectors"].to_pylist()):
        assert len(vectors) == layers.size * np.dtype(dtype).itemsize
        array = to_array(shape, dtype, vectors)
        assert array.dtype == np.dtype(dtype) and array.shape == layers.shape
        np.testing.assert_array_equal(array, layers.astype(dtype))


def test_the_vectors_are_stored_little_endian_whatever_the_input_order():
    big_endian = np.arange(6, dtype=">f4").reshape(1, 2, 3)
    (vectors,) = vector_columns([(["x", "y"], big_endian)], "float32")["vectors"].to_pylist()
    assert vectors == np.arange(6, dtype="<f4").tobytes()
    np.testing.assert_array_equal(to_array([1, 2, 3], "float32", vectors), big_endian)


def test_read_embeddings_and_summarize_read_every_part_of_a_folder(tmp_path):
    write_part(tmp_path / "part-0.parquet", ["a.txt"] * 2, [0, 1], [None, "empty"], ROWS[:2])
    write_part(tmp_path / "part-1.parquet", ["b.txt"], [0], [None], ROWS[2:], dtype="float16")
    read = sorted(read_embeddings(tmp_path), key=lambda row: (row[0], row[1]))
    assert [(source, line, tokens, array.shape) for source, line, tokens, array in read] == [
        ("a.txt", 0, ["a", "b"], (3, 2, 4)),
        ("a.txt", 1, [], (3, 0, 4)),
        ("b.txt", 0, ["c"], (3, 1, 4)),
    ]
    np.testing.assert_array_equal(read[0][3], ROWS[0][1].astype(np.float32))
    assert read[2][3].dtype == np.float16
    assert summarize(tmp_path) == {"rows": 3, "tokens": 3, "problems": [("a.txt", 1, "empty")]}


def test_summarize_counts_no_tokens_as_zero(tmp_path):
    write_part(tmp_path / "part-0.parquet", ["b.txt", "a.txt"], [3, 7], ["not UTF-8", "empty"], [ROWS[1], ROWS[1]])
    assert summarize(tmp_path) == {"rows": 2, "tokens": 0, "problems": [("a.txt", 7, "empty"), ("b.txt", 3, "not UTF-8")]}
