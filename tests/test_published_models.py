"""Published weights by name: downloaded once from a server (here on 127.0.0.1, serving the
fixture weights under the published relative paths), then read from the cache."""
import http.server
import threading

import pytest
import torch
from typer.testing import CliRunner

from spacy_elmo.bilm import ModelFormatError, load_bilm
from spacy_elmo.bilm.remote import PUBLISHED, file_url, model_folder
from spacy_elmo.cli.app import app
from spacy_elmo.cli.main import main  # noqa: F401  (registers the commands)


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


@pytest.fixture
def server(allennlp_model_files, tmp_path, monkeypatch):
    weights, options = allennlp_model_files
    monkeypatch.setenv("SPACY_ELMO_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SPACY_ELMO_OFFLINE", raising=False)
    stem = PUBLISHED["elmo-small"].stem
    files = {
        f"/{stem}/elmo_{stem}_options.json": options.read_bytes(),
        f"/{stem}/elmo_{stem}_weights.hdf5": weights.read_bytes(),
    }
    server = Server(files)
    monkeypatch.setenv("SPACY_ELMO_MIRROR", server.url)
    yield server
    server.close()


def same_weights(a, b):
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_first_use_downloads_and_later_uses_read_the_cache(server, allennlp_model_files):
    weights, options = allennlp_model_files
    bilm = load_bilm("elmo-small")
    assert len(server.requests) == 2 and same_weights(bilm, load_bilm(weights, options=options))
    assert file_url("elmo-small", "weights.hdf5").startswith(server.url)
    load_bilm("elmo-small")
    assert len(server.requests) == 2


def test_an_interrupted_download_leaves_no_file_and_a_retry_succeeds(server):
    server.drop_after = 1000
    with pytest.raises(ModelFormatError, match="cannot download .*weights.hdf5 into .*cache/elmo-small"):
        load_bilm("elmo-small")
    assert [p.name for p in model_folder("elmo-small").iterdir()] == ["options.json"]  # no partial weights
    server.drop_after = None
    assert load_bilm("elmo-small").n_layers == 3


def test_a_corrupt_file_gives_the_format_error(server):
    for path in server.files:
        if path.endswith(".hdf5"):
            server.files[path] = b"\x89HDF\r\n\x1a\n" + b"\x00" * 5000
    with pytest.raises(ModelFormatError, match="weights.hdf5"):
        load_bilm("elmo-small")


def test_offline_names_the_url_the_cache_and_what_to_do(server, monkeypatch):
    monkeypatch.setenv("SPACY_ELMO_OFFLINE", "1")
    with pytest.raises(ModelFormatError, match="OFFLINE.*by hand.*http://127.0.0.1"):
        load_bilm("elmo-small")
    assert server.requests == []


def test_download_and_models_commands(server):
    runner = CliRunner()
    assert "elmo-small           published, 13.6 M parameters, not cached" in runner.invoke(app, ["models"]).output
    result = runner.invoke(app, ["download", "elmo-small"])
    assert result.exit_code == 0, result.output
    assert "elmo-small           published, 13.6 M parameters, cached" in runner.invoke(app, ["models"]).output
    result = runner.invoke(app, ["download", "elmo-huge"])
    assert result.exit_code == 1 and "no published model named 'elmo-huge'" in result.output
