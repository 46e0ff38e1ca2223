"""Published weights by name: downloaded once from a server (here on 127.0.0.1, serving the
fixture weights under the published relative paths), then read from the cache."""
import http.server
import io
import json
import tarfile
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from spacy_elmo.bilm import ModelFormatError, export_original, load_bilm
from spacy_elmo.bilm.errors import ModelDownloadError
from spacy_elmo.bilm.model_info import read_model_info
from spacy_elmo.bilm.published import PUBLISHED
from spacy_elmo.bilm.remote import downloads, model_folder
from spacy_elmo.cli.app import app
from spacy_elmo.cli.main import main  # noqa: F401  (registers the commands)

from ..conftest import random_bilm

EFML_FIXTURE = Path(__file__).parents[1] / "fixtures" / "efml"


class Server:
    """Serves {path: bytes}; `drop_after` cuts every response after that many bytes."""

    def __init__(self, files):
        self.files, self.requests, self.drop_after = files, [], None
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                server.requests.append(self.path)
                data = server.files.get(self.path)
                if data is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data if server.drop_after is None else data[: server.drop_after])
                self.wfile.flush()
                self.close_connection = True

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


def serve(files, monkeypatch, tmp_path):
    monkeypatch.setenv("SPACY_ELMO_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SPACY_ELMO_OFFLINE", raising=False)
    server = Server(files)
    monkeypatch.setenv("SPACY_ELMO_MIRROR", server.url)
    return server


@pytest.fixture
def server(allennlp_model_files, tmp_path, monkeypatch):
    weights, options = allennlp_model_files
    files = PUBLISHED["elmo-small"].files
    server = serve({f"/{files[0]}": options.read_bytes(), f"/{files[1]}": weights.read_bytes()}, monkeypatch, tmp_path)
    yield server
    server.close()


def archive_bytes(folder, inside="", tar=False):
    """A .zip (or .tar.bz2) of the files of `folder`, under the folder name `inside`."""
    buffer = io.BytesIO()
    if tar:
        with tarfile.open(fileobj=buffer, mode="w:bz2") as handle:
            for path in sorted(folder.iterdir()):
                handle.add(path, arcname=f"{inside}{path.name}")
    else:
        with zipfile.ZipFile(buffer, "w") as handle:
            for path in sorted(folder.iterdir()):
                handle.write(path, f"{inside}{path.name}")
    return buffer.getvalue()


@pytest.fixture
def nlpl_folder(tmp_path):
    """A tiny bilm-tf model in the NLPL layout: model.hdf5, options.json, meta.json."""
    folder = tmp_path / "nlpl"
    export_original(random_bilm(), folder, weights_name="model.hdf5")
    meta = {"id": 210, "corpus": [{"description": "Norwegian Wikipedia", "language": "nor"}]}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


@pytest.fixture
def archive_server(nlpl_folder, tmp_path, monkeypatch):
    files = {
        "/11/179.zip": archive_bytes(EFML_FIXTURE, inside="zht.model/"),
        "/zhs.model.tar.bz2": archive_bytes(EFML_FIXTURE, inside="zhs.model/", tar=True),
        "/20/210.zip": archive_bytes(nlpl_folder),
    }
    server = serve(files, monkeypatch, tmp_path)
    yield server
    server.close()


def same_weights(a, b):
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_first_use_downloads_and_later_uses_read_the_cache(server, allennlp_model_files):
    weights, options = allennlp_model_files
    bilm = load_bilm("elmo-small")
    assert len(server.requests) == 2 and same_weights(bilm, load_bilm(weights, options=options))
    assert [url for url, _ in downloads("elmo-small")] == [server.url + path for path in PUBLISHED["elmo-small"].files]
    load_bilm("elmo-small")
    assert len(server.requests) == 2


def test_an_interrupted_download_leaves_no_file_and_a_retry_succeeds(server):
    server.drop_after = 1000
    with pytest.raises(ModelDownloadError, match="cannot download .*weights.hdf5 into .*cache/elmo-small"):
        load_bilm("elmo-small")
    assert [p.name for p in model_folder("elmo-small").iterdir()] == ["options.json"]  # no partial weights
    server.drop_after = None
    assert load_bilm("elmo-small").n_layers == 3


def test_a_failed_first_download_leaves_no_empty_cache_folder(monkeypatch, tmp_path):
    server = serve({}, monkeypatch, tmp_path)  # every file: 404
    try:
        with pytest.raises(ModelDownloadError, match="cannot download"):
            load_bilm("elmo-small")
        assert not model_folder("elmo-small").exists()
    finally:
        server.close()


def test_a_corrupt_file_gives_the_format_error(server):
    for path in server.files:
        if path.endswith(".hdf5"):
            server.files[path] = b"\x89HDF\r\n\x1a\n" + b"\x00" * 5000
    with pytest.raises(ModelFormatError, match="weights.hdf5"):
        load_bilm("elmo-small")


def test_offline_names_every_file_to_place_in_one_message(server, monkeypatch):
    monkeypatch.setenv("SPACY_ELMO_OFFLINE", "1")
    with pytest.raises(ModelDownloadError) as caught:
        load_bilm("elmo-small")
    message = str(caught.value)
    assert "OFFLINE" in message and not isinstance(caught.value, ModelFormatError)
    for url, target in downloads("elmo-small"):
        assert f"download {url} to {target}" in message
    assert server.requests == []


def test_a_file_placed_by_hand_is_used_offline(archive_server, monkeypatch):
    monkeypatch.setenv("SPACY_ELMO_OFFLINE", "1")
    ((url, target),) = downloads("efml-zh-hant")
    assert url.endswith("/11/179.zip") and target.name == "179.zip"
    with pytest.raises(ModelDownloadError, match=f"download {url} to {target}"):
        load_bilm("efml-zh-hant")
    target.parent.mkdir(parents=True)
    target.write_bytes(archive_server.files["/11/179.zip"])
    assert load_bilm("efml-zh-hant").n_layers == 3 and archive_server.requests == []


def test_efml_names_download_unpack_and_load_the_model(archive_server):
    expected = load_bilm(EFML_FIXTURE).embed_sentences([["今天", "天氣"]])[0]
    for name in ("efml-zh-hant", "efml-zh"):
        output = load_bilm(name).embed_sentences([["今天", "天氣"]])[0]
        assert np.array_equal(output, expected)
        assert [p.name for p in model_folder(name).iterdir()] == ["model"]  # the archive is gone
    assert len(archive_server.requests) == 2
    load_bilm("efml-zh")
    assert len(archive_server.requests) == 2
    assert read_model_info("efml-zh") == PUBLISHED["efml-zh"].info()
    assert read_model_info("efml-zh")["lang"] == "zh"


def test_nlpl_names_load_as_the_weights_and_carry_the_card(archive_server, nlpl_folder):
    assert read_model_info("nlpl-210")["lang"] == "nb" and archive_server.requests == []  # no download for a card
    assert same_weights(load_bilm("nlpl-210"), load_bilm(nlpl_folder / "model.hdf5", options=nlpl_folder / "options.json"))
    info = read_model_info("nlpl-210")
    assert info["name"] == "nlpl-210" and info["corpus"] == PUBLISHED["nlpl-210"].corpus


def test_download_and_models_commands(server):
    runner = CliRunner()
    listing = runner.invoke(app, ["models"]).output
    assert "elmo-small           en   published, 13.6 M parameters, not cached" in listing
    assert "efml-zh-hant         zh   published, 94.1 M parameters, not cached" in listing
    assert "nlpl-210             nb   published, size unknown, not cached" in listing
    result = runner.invoke(app, ["download", "elmo-small"])
    assert result.exit_code == 0, result.output
    assert "elmo-small           en   published, 13.6 M parameters, cached" in runner.invoke(app, ["models"]).output
    result = runner.invoke(app, ["download", "elmo-huge"])
    assert result.exit_code == 1 and "no published model named 'elmo-huge'" in result.output


def test_a_corrupt_archive_says_how_to_download_again(archive_server):
    archive_server.files["/11/179.zip"] = archive_server.files["/11/179.zip"][:300]
    with pytest.raises(ModelFormatError, match=r"179\.zip: .*delete .*179\.zip to download it again"):
        load_bilm("efml-zh-hant")
    assert [p.name for p in model_folder("efml-zh-hant").iterdir()] == ["179.zip"]  # no half-unpacked model
