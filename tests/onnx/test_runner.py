"""`OnnxBiLM`: the embedding API of `BiLM` on ONNX Runtime, importable without torch."""
import importlib
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from spacy_elmo.onnx import OnnxBiLM, export_onnx  # noqa: E402
from spacy_elmo.onnx.interface import ACTIVE_ROWS_KEY  # noqa: E402
from spacy_elmo.onnx.runner import _length_groups  # noqa: E402

from ..conftest import random_bilm  # noqa: E402


@pytest.fixture(scope="module")
def tiny_onnx(tmp_path_factory):
    bilm = random_bilm()
    return bilm, export_onnx(bilm, tmp_path_factory.mktemp("onnx") / "tiny.onnx")


def test_the_runner_works_where_torch_cannot_be_imported(tiny_onnx):
    bilm, path = tiny_onnx
    saved = dict(sys.modules)
    try:
        for name in [n for n in sys.modules if n.split(".")[0] in ("spacy_elmo", "torch")]:
            del sys.modules[name]
        sys.modules["torch"] = None  # type: ignore[assignment]  (import torch raises ImportError)
        runner = importlib.import_module("spacy_elmo.onnx.runner").OnnxBiLM(path, threads=1)
        layers = runner.embed_sentences([["a", "b"], ["c"]])
        assert sys.modules["torch"] is None and not any(n.startswith("torch.") for n in sys.modules)
    finally:
        for name in set(sys.modules) - set(saved):
            del sys.modules[name]
        sys.modules.update(saved)
    for a, b in zip(layers, bilm.embed_sentences([["a", "b"], ["c"]])):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)


def test_runner_checks_its_input_as_the_biLM(tiny_onnx):
    runner = OnnxBiLM(tiny_onnx[1], threads=1)
    assert runner.embed_sentences([]) == []
    assert runner.embed_sentences([[], []])[1].shape == (3, 0, 16)
    with pytest.raises(TypeError, match="got a string"):
        runner.embed_sentences("a sentence")
    with pytest.raises(TypeError, match="token 1 is a int"):
        runner.embed_sentences([["a", 1]])


def test_length_groups_split_a_batch_only_where_padding_costs_more_than_a_run():
    assert _length_groups([]) == [[]]
    assert _length_groups([25] * 10) == [list(range(10))]
    assert _length_groups([20, 19, 18, 20, 17]) == [[0, 1, 2, 3, 4]]  # close lengths: one run
    assert _length_groups([3, 50, 4, 49, 5, 2, 48]) == [[1, 3, 6], [0, 2, 4, 5]]
    lengths = [1 + (7 * i) % 68 for i in range(64)]
    groups = _length_groups(lengths)
    assert sorted(i for group in groups for i in group) == list(range(64))
    longest = [max(lengths[i] for i in group) for group in groups]
    assert longest == sorted(longest, reverse=True) and len(groups) > 1
    for group in groups:  # rows of one length stay together
        assert all(lengths.count(lengths[i]) == sum(lengths[j] == lengths[i] for j in group) for i in group)


def test_only_graphs_that_step_every_row_split_their_batches(tiny_onnx):
    model = onnx.load(str(tiny_onnx[1]))
    assert not OnnxBiLM(model.SerializeToString(), threads=1).split_by_length
    kept = [prop for prop in model.metadata_props if prop.key != ACTIVE_ROWS_KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    assert OnnxBiLM(model.SerializeToString(), threads=1).split_by_length  # exported before the key


def test_a_batch_of_mixed_lengths_gives_the_layers_of_one_run(tmp_path):
    runner = OnnxBiLM(export_onnx(random_bilm(), tmp_path / "tiny.onnx"), threads=1, cache_bytes=0)
    runner.split_by_length = True  # as for a graph exported before its LSTMs computed only the active rows
    batch = [["a"] * 40, [], "The cat".split(), "x y z w".split(), ["b"] * 39, ["Play"], []]
    assert len(_length_groups([len(s) for s in batch])) > 1
    split, whole = runner.embed_batch(batch), runner._run(batch)
    assert [a.shape for a in split] == [b.shape for b in whole]
    for a, b in zip(split, whole):
        np.testing.assert_allclose(a, b, atol=1e-6, rtol=0)
