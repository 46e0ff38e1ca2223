"""Shared by the tests of the native and original formats (test_formats.py, test_original_format.py)."""
import numpy as np

SENTENCES = [["Hello", "world", "!"], ["ELMo", "vectors", "depend", "on", "context"], []]


def assert_same_outputs(a, b, atol=1e-6):
    for x, y in zip(a.embed_sentences(SENTENCES), b.embed_sentences(SENTENCES)):
        np.testing.assert_allclose(x, y, atol=atol)


PUBLISHED_FILTERS = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]
PUBLISHED = {  # name: (lstm.dim, projection_dim, n_highway, parameters as published)
    "small": (1024, 128, 1, 13_593_296),
    "medium": (2048, 256, 1, 28_027_728),
    "original": (4096, 512, 2, 93_600_848),
    "original_5.5B": (4096, 512, 2, 93_600_848),
}


def published_options(name: str) -> dict:
    dim, projection, n_highway, _ = PUBLISHED[name]
    return {
        "lstm": {"use_skip_connections": True, "projection_dim": projection, "cell_clip": 3,
                 "proj_clip": 3, "dim": dim, "n_layers": 2},
        "char_cnn": {"activation": "relu", "filters": PUBLISHED_FILTERS, "n_highway": n_highway,
                     "embedding": {"dim": 16}, "n_characters": 262, "max_characters_per_token": 50},
    }
