"""`unpack` and `is_archive` on their own: which members are written, zip and tar, bad archives
(NLPL archives loaded end to end: tests/bilm/test_nlpl.py)."""
import io
import tarfile
import zipfile

import pytest

from spacy_elmo.bilm.archive import is_archive, unpack
from spacy_elmo.bilm.errors import ModelFormatError


def make_zip(path, members):
    with zipfile.ZipFile(path, "w") as handle:
        for name, data in members.items():
            handle.writestr(name, data)
    return path


def make_tar(path, members, mode="w:gz"):
    with tarfile.open(path, mode) as handle:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            handle.addfile(info, io.BytesIO(data))
    return path


def files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_the_shallowest_model_folder_is_unpacked_under_base_names(tmp_path):
    archive = make_zip(
        tmp_path / "m.zip",
        {
            "README": b"top-level, no model here",
            "elmo/options.json": b"{}",
            "elmo/model.hdf5": b"weights",
            "elmo/sub/options.json": b"a deeper model",
            "zzz/token_embedder.pkl": b"another model at the same depth, later by name",
        },
    )
    assert unpack(archive, tmp_path / "out") == tmp_path / "out"
    assert files(tmp_path / "out") == {"model.hdf5": b"weights", "options.json": b"{}"}


def test_a_model_at_the_top_wins_over_folders(tmp_path):
    archive = make_zip(tmp_path / "m.zip", {"options.json": b"top", "model.hdf5": b"w", "inner/options.json": b"inner"})
    assert files(unpack(archive, tmp_path / "out")) == {"model.hdf5": b"w", "options.json": b"top"}


@pytest.mark.parametrize("name, mode", [("m.tar.gz", "w:gz"), ("m.tar.bz2", "w:bz2"), ("m.tar", "w")])
def test_tar_archives(tmp_path, name, mode):
    archive = make_tar(tmp_path / name, {"zhs.model/config.json": b"c", "zhs.model/model.safetensors": b"s", "other/x": b"x"}, mode)
    assert is_archive(archive)
    assert files(unpack(archive, tmp_path / "out")) == {"config.json": b"c", "model.safetensors": b"s"}


def test_members_that_climb_out_are_written_inside_the_target(tmp_path):
    archive = make_tar(tmp_path / "m.tar.gz", {"../../options.json": b"o", "../../model.hdf5": b"w"})
    assert files(unpack(archive, tmp_path / "deep" / "out")) == {"model.hdf5": b"w", "options.json": b"o"}
    assert not (tmp_path / "options.json").exists() and not (tmp_path / "deep" / "options.json").exists()


def test_what_is_an_archive(tmp_path):
    assert is_archive(make_zip(tmp_path / "named.bin", {"a": b"b"}))  # a zip by its content
    (tmp_path / "text.txt").write_text("plain text\n")
    assert not is_archive(tmp_path / "text.txt")
    assert not is_archive(tmp_path / "missing.zip")  # not a file
    (tmp_path / "folder.zip").mkdir()
    assert not is_archive(tmp_path / "folder.zip")


def test_an_archive_without_a_model_names_what_it_expected(tmp_path):
    archive = make_zip(tmp_path / "docs.zip", {"docs/README.md": b"x"})
    with pytest.raises(ModelFormatError) as err:
        unpack(archive, tmp_path / "out")
    assert str(err.value) == (
        f"{archive}: no model inside (no folder with options.json, token_embedder.pkl, model.safetensors); "
        "expected an NLPL ELMo archive (model.hdf5 + options.json) or an ELMoForManyLangs model folder"
    )
    assert not (tmp_path / "out").exists()


def test_a_truncated_archive_is_named(tmp_path):
    archive = make_tar(tmp_path / "m.tar.gz", {"options.json": b"o" * 100_000, "model.hdf5": bytes(range(256)) * 400})
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError, match=r"m\.tar\.gz: cannot unpack the archive, truncated or corrupted \("):
        unpack(archive, tmp_path / "out")
    (tmp_path / "bad.zip").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ModelFormatError, match=r"bad\.zip: cannot unpack the archive, truncated or corrupted"):
        unpack(tmp_path / "bad.zip", tmp_path / "out2")
