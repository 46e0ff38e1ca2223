"""`EmbedRows`, the actor `embed_dataset` runs, called in this process (no Ray cluster): each
row's problem, tokens and layers, the columns kept, a load failure raised by the first batch;
and the arguments `embed_dataset` hands to Ray Data.

(The runs on a local Ray are in test_ray_data.py and test_cluster.py.)"""
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray", reason="the ray extra is not installed")
pa = pytest.importorskip("pyarrow")

from spacy_elmo.bilm import save_bilm  # noqa: E402
from spacy_elmo.embed.settings import EmbedSettings  # noqa: E402
from spacy_elmo.errors import SpacyElmoError  # noqa: E402
from spacy_elmo.layers.model_settings import ElmoModelSettings  # noqa: E402
from spacy_elmo.ray_data.embed import EmbedRows, embed_dataset  # noqa: E402
from spacy_elmo.ray_data.output import to_array  # noqa: E402

from ..conftest import random_bilm  # noqa: E402
from .helpers import FakeDataset  # noqa: E402


@pytest.fixture(scope="module")
def bilm():
    return random_bilm()


@pytest.fixture(scope="module")
def model(tmp_path_factory, bilm) -> ElmoModelSettings:
    folder = save_bilm(bilm, tmp_path_factory.mktemp("bilm") / "tiny")
    return ElmoModelSettings(bilm=str(folder), device="cpu")


def arrays(table):
    return [to_array(s, d, v) for s, d, v in zip(*(table[c].to_pylist() for c in ("shape", "dtype", "vectors")))]


def test_rows_get_tokens_and_layers_or_a_problem_and_keep_their_columns(model, bilm):
    rows = EmbedRows(EmbedSettings(model=model, tokenize="whitespace"), "body", threads=1)
    batch = pa.table({"id": [1, 2, 3, 4], "body": ["a b", "  ", None, "c"], "tokens": ["stale"] * 4})
    out = rows(batch)
    assert out.column_names == ["id", "body", "problem", "tokens", "shape", "dtype", "vectors"]
    assert out["id"].to_pylist() == [1, 2, 3, 4] and out["body"].to_pylist() == ["a b", "  ", None, "c"]
    assert out["problem"].to_pylist() == [None, "empty", "not a string", None]
    assert out["tokens"].to_pylist() == [["a", "b"], [], [], ["c"]]
    got = arrays(out)
    assert [a.shape for a in got] == [(3, 2, 16), (3, 0, 16), (3, 0, 16), (3, 1, 16)]
    expected = bilm.embed_sentences([["a", "b"], ["c"]])
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[3], expected[1], rtol=1e-5, atol=1e-6)


def test_a_problem_given_by_the_reader_is_kept_and_its_row_not_embedded(model):
    rows = EmbedRows(EmbedSettings(model=model, tokenize="whitespace"), "text", threads=1)
    out = rows(pa.table({"text": ["a", "b"], "problem": ["not UTF-8", None]}))
    assert out["problem"].to_pylist() == ["not UTF-8", None]
    assert out["tokens"].to_pylist() == [[], ["b"]]


def test_one_layer_in_float16_is_stored_with_a_leading_axis_of_one(model, bilm):
    rows = EmbedRows(EmbedSettings(model=model, tokenize="whitespace", layer="top", storage_dtype="float16"), "text", threads=1)
    out = rows(pa.table({"text": ["a b", ""]}))
    top, empty = arrays(out)
    assert top.dtype == np.float16 and top.shape == (1, 2, 16) and empty.shape == (1, 0, 16)
    (expected,) = bilm.embed_sentences([["a", "b"]])
    np.testing.assert_allclose(top[0], expected[2], rtol=1e-2, atol=1e-3)


def test_a_model_that_cannot_load_fails_at_the_first_batch(tmp_path: Path):
    rows = EmbedRows(EmbedSettings(model=ElmoModelSettings(bilm=str(tmp_path / "nope"))), "text", threads=1)
    assert isinstance(rows.error, SpacyElmoError)
    with pytest.raises(SpacyElmoError) as err:
        rows(pa.table({"text": ["a"]}))
    assert err.value is rows.error and "nope" in str(err.value)


@pytest.mark.parametrize("model_device,gpus,expected", [("auto", 1, "cuda"), ("auto", 0, "auto"), ("cpu", 1, "cpu")])
def test_embed_dataset_asks_for_an_actor_pool_and_uses_cuda_for_auto_with_gpus(model_device, gpus, expected):
    ds = FakeDataset()
    settings = EmbedSettings(model=ElmoModelSettings(device=model_device, batch_size=5))
    assert embed_dataset(ds, settings, text_column="body", concurrency=3, num_cpus=2.5, num_gpus=gpus) == "mapped"
    given, column, threads = ds.kwargs["fn_constructor_args"]
    assert ds.fn is EmbedRows and (column, threads) == ("body", 2)
    assert given.model.device == expected and given.model.batch_size == 5
    assert (ds.kwargs["batch_size"], ds.kwargs["batch_format"], ds.kwargs["num_cpus"], ds.kwargs["num_gpus"]) == (5, "pyarrow", 2.5, gpus)
    assert ds.kwargs["compute"].min_size == ds.kwargs["compute"].max_size == 3


def test_embed_dataset_refuses_a_pool_ray_cannot_make():
    with pytest.raises(SpacyElmoError, match="workers \\(concurrency\\) must be a whole number of at least 1, got 0"):
        embed_dataset(FakeDataset(), concurrency=0)
