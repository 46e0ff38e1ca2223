"""`spacy_elmo.allennlp` against AllenNLP 2.10.1 itself (through ../shared/tools/allennlp_reference.py)."""
import json
import os
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from spacy_elmo.allennlp import Elmo, ElmoEmbedder, batch_to_ids

SENTENCES = [["The", "cat", "sat", "on", "the", "mat", "."], ["Dogs", "bark"], ["Überraschung", "!", "😀"]]
LATER = [["Another", "batch", "follows", "."], ["Short"], ["Three", "more", "words"]]


def tools_dir() -> Path:
    env = os.environ.get("SPACY_ELMO_TOOLS")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "tools"


@pytest.fixture(scope="module")
def allennlp():
    if not (tools_dir() / "allennlp_reference.py").is_file():
        pytest.skip(f"allennlp_reference.py not found in {tools_dir()}; set SPACY_ELMO_TOOLS")
    sys.path.insert(0, str(tools_dir()))
    try:
        from allennlp_reference import load_allennlp_elmo

        return load_allennlp_elmo()
    finally:
        sys.path.remove(str(tools_dir()))


def pair(allennlp, files, stateful=False, **kwargs):
    weights, options = files
    theirs = allennlp.Elmo(str(options), str(weights), **kwargs).eval()
    ours = Elmo(options, weights, stateful=stateful, **kwargs).eval()
    return ours, theirs


def assert_same_output(ours, theirs, ids):
    a, b = ours(ids), theirs(ids)
    assert torch.equal(a["mask"], b["mask"])
    assert len(a["elmo_representations"]) == len(b["elmo_representations"])
    for x, y in zip(a["elmo_representations"], b["elmo_representations"]):
        assert x.shape == y.shape
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-5)


def test_batch_to_ids_equals_allennlp(allennlp):
    assert torch.equal(batch_to_ids(SENTENCES), allennlp.batch_to_ids(SENTENCES))


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"do_layer_norm": True},
        {"scalar_mix_parameters": [-1.0, 0.5, 2.0]},
        {"keep_sentence_boundaries": True, "do_layer_norm": True},
    ],
)
def test_stateless_first_batch_equals_allennlp(allennlp, allennlp_model_files, settings):
    ours, theirs = pair(allennlp, allennlp_model_files, num_output_representations=2, dropout=0.0, **settings)
    with torch.no_grad():
        assert_same_output(ours, theirs, batch_to_ids(SENTENCES))
        # Stateless: the same batch again gives the same output (AllenNLP's would change).
        first = ours(batch_to_ids(SENTENCES))["elmo_representations"][0]
        torch.testing.assert_close(ours(batch_to_ids(SENTENCES))["elmo_representations"][0], first)


def test_stateful_replay_equals_allennlp(allennlp, allennlp_model_files):
    ours, theirs = pair(allennlp, allennlp_model_files, num_output_representations=1, dropout=0.0, stateful=True)
    with torch.no_grad():
        for batch in (SENTENCES, LATER, SENTENCES):
            assert_same_output(ours, theirs, batch_to_ids(batch))


def test_more_leading_dims_are_reshaped_as_allennlp(allennlp, allennlp_model_files):
    ours, theirs = pair(allennlp, allennlp_model_files, num_output_representations=1, dropout=0.0)
    ids = batch_to_ids(SENTENCES[:2] + LATER[:2]).view(2, 2, -1, 50)
    with torch.no_grad():
        assert_same_output(ours, theirs, ids)


def test_gradients_reach_the_biLM_and_the_mix_with_requires_grad(model_files):
    weights, options = model_files
    elmo = Elmo(options, weights, num_output_representations=1, requires_grad=True, dropout=0.0)
    out = elmo(batch_to_ids(SENTENCES))["elmo_representations"][0]
    out.sum().backward()
    assert all(p.grad is not None for p in elmo._bilm.parameters())
    assert elmo._scalar_mixes[0].weights.grad is not None
    frozen = Elmo(options, weights, num_output_representations=1, scalar_mix_parameters=[0.0, 0.0, 1.0], dropout=0.0)
    assert not any(p.requires_grad for p in frozen.parameters())


def test_embedder_gives_the_stateless_layers_and_writes_allennlp_files(model_files, tmp_path):
    weights, options = model_files
    embedder = ElmoEmbedder(options, weights)
    expected = embedder.bilm.embed_sentences(SENTENCES)
    for ours, theirs in zip(embedder.embed_sentences(SENTENCES, batch_size=2), expected):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(embedder.embed_sentence(SENTENCES[1]), expected[1], rtol=1e-5, atol=1e-6)
    assert embedder.embed_batch([[]])[0].shape == (3, 0, 32)
    lines = [" ".join(s) for s in SENTENCES]
    (tmp_path / "in.txt").write_text("\n".join(lines + lines[:1]) + "\n", encoding="utf8")
    embedder.embed_file(tmp_path / "in.txt", tmp_path / "out.hdf5", output_format="average")
    with h5py.File(tmp_path / "out.hdf5", "r") as handle:
        assert sorted(handle) == ["0", "1", "2", "3", "sentence_to_index"]
        np.testing.assert_allclose(handle["1"][()], expected[1].mean(axis=0), rtol=1e-5, atol=1e-6)
        assert json.loads(handle["sentence_to_index"][0])[lines[0]] == "3"
