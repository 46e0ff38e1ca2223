"""Shared pytest fixtures: the reference fixtures of ELMo, small random biLMs, the device.

`pytest --gpu` runs the suite's device-aware tests (those taking the `device` fixture) on CUDA
as well as on the CPU; `-m "not slow"` leaves out the end-to-end runs.
"""
import os
from pathlib import Path

import pytest

from spacy_elmo.bilm import BiLM, BiLMArchitecture

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"

TINY_CONFIG = BiLMArchitecture(
    char_embedding_dim=4,
    filters=((1, 4), (2, 8), (3, 16)),
    n_highway=1,
    max_characters_per_token=20,
    lstm_dim=24,
    projection_dim=8,
    n_layers=2,
    cell_clip=3.0,
    proj_clip=3.0,
    use_skip_connections=True,
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--gpu", action="store_true", help="also run the device-aware tests on CUDA")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--gpu"):
        import torch

        if not torch.cuda.is_available():
            raise pytest.UsageError("--gpu: torch sees no CUDA GPU here (a CPU build of torch, or no driver)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`device`: "cpu", and "cuda" too under --gpu."""
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", ["cpu", "cuda"] if metafunc.config.getoption("--gpu") else ["cpu"])


def elmo_fixtures_path() -> Path:
    """The ELMo reference fixtures: $SPACY_ELMO_FIXTURES, else tests/fixtures/elmo."""
    env = os.environ.get("SPACY_ELMO_FIXTURES")
    return Path(env) if env else FIXTURES / "elmo"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    path = elmo_fixtures_path()
    if not (path / "allennlp" / "lm_weights.hdf5").is_file():
        pytest.fail(f"ELMo reference fixtures not found at {path} (SPACY_ELMO_FIXTURES names another copy)")
    return path


@pytest.fixture(scope="session")
def allennlp_model_files(fixtures_dir: Path):
    """(weights, options) of the tiny skip-connection model of AllenNLP's fixtures."""
    return fixtures_dir / "allennlp" / "lm_weights.hdf5", fixtures_dir / "allennlp" / "options.json"


# The architecture of AllenNLP's test model (its options.json), for pipeline tests that need a
# model of that shape but not its weights.
PIPELINE_TEST_OPTIONS = {
    "lstm": {"cell_clip": 3, "use_skip_connections": True, "n_layers": 2, "proj_clip": 3, "projection_dim": 16, "dim": 64},
    "char_cnn": {
        "embedding": {"dim": 4},
        "filters": [[1, 4], [2, 8], [3, 16], [4, 32], [5, 64]],
        "n_highway": 2,
        "n_characters": 262,
        "max_characters_per_token": 50,
        "activation": "relu",
    },
}


@pytest.fixture(scope="session")
def model_files(tmp_path_factory):
    """(weights, options) of a random biLM in the original format, shaped as AllenNLP's test
    model: for pipeline tests, which need no reference outputs and so no external fixtures."""
    from spacy_elmo.bilm import export_original

    options, weights = export_original(
        random_bilm(BiLMArchitecture.from_options_json(PIPELINE_TEST_OPTIONS)), tmp_path_factory.mktemp("model"), "weights.hdf5"
    )
    return weights, options


def random_bilm(config: BiLMArchitecture = TINY_CONFIG, seed: int = 0) -> BiLM:
    """A biLM with the bilm-tf initialisation and a fixed seed, in eval mode."""
    import torch

    torch.manual_seed(seed)
    bilm = BiLM(config)
    bilm.reset_parameters()
    return bilm.eval()
