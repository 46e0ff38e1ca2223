"""AllenNLP's hdf5 layout, written by `spacy_elmo.embed.hdf5_file`: the vectors as given, nothing half-written."""
import h5py
import numpy as np
import pytest

from spacy_elmo.embed.hdf5_file import write_embedding_file
from spacy_elmo.errors import SpacyElmoError


def test_the_writer_keeps_allennlps_options(tmp_path):
    layers = np.arange(3 * 2 * 4, dtype=np.float32).reshape(3, 2, 4)
    assert write_embedding_file(tmp_path / "top.hdf5", [("a b", layers[-1])], forget_sentences=True) == 1
    with h5py.File(tmp_path / "top.hdf5", "r") as handle:
        assert sorted(handle) == ["0"]
        np.testing.assert_array_equal(handle["0"][()], layers[-1])
    write_embedding_file(tmp_path / "keys.hdf5", [("a b", layers.mean(axis=0))], use_sentence_keys=True)
    with h5py.File(tmp_path / "keys.hdf5", "r") as handle:
        assert sorted(handle) == ["a b"]
        np.testing.assert_allclose(handle["a b"][()], layers.mean(axis=0))
    with pytest.raises(SpacyElmoError, match="twice"):
        write_embedding_file(tmp_path / "twice.hdf5", [("a b", layers), ("a b", layers)], use_sentence_keys=True)


@pytest.mark.parametrize("fault", [KeyboardInterrupt, OSError])
def test_an_interrupted_or_failed_write_leaves_nothing(tmp_path, fault):
    layers = np.zeros((3, 2, 4), dtype=np.float32)

    def items():
        yield "a b", layers
        raise fault("stopped")  # Ctrl-C, or the disk full, after one row

    with pytest.raises(fault):
        write_embedding_file(tmp_path / "out.hdf5", items())
    assert list(tmp_path.iterdir()) == []  # neither the file nor its temporary twin
    assert write_embedding_file(tmp_path / "out.hdf5", [("a b", layers)]) == 1  # so a rerun is not "already exists"
    assert [p.name for p in tmp_path.iterdir()] == ["out.hdf5"]
