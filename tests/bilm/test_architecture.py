"""BiLMArchitecture: its checks (all problems in one message), its derived sizes, and the dict of
a bilm-tf options.json, read and written."""
import pytest

from spacy_elmo.bilm import BiLMArchitecture, ModelFormatError

OPTIONS = {
    "lstm": {"dim": 32, "projection_dim": 8, "n_layers": 2, "cell_clip": 3, "proj_clip": None, "use_skip_connections": True},
    "char_cnn": {
        "activation": "tanh",
        "filters": [[1, 4], [2, 4]],
        "n_highway": 1,
        "embedding": {"dim": 4},
        "n_characters": 261,
        "max_characters_per_token": 10,
    },
}


def test_options_json_is_read_into_the_architecture():
    architecture = BiLMArchitecture.from_options_json(OPTIONS)
    assert architecture == BiLMArchitecture(
        char_embedding_dim=4,
        filters=((1, 4), (2, 4)),
        n_highway=1,
        max_characters_per_token=10,
        activation="tanh",
        lstm_dim=32,
        projection_dim=8,
        n_layers=2,
        cell_clip=3.0,
        proj_clip=None,
        use_skip_connections=True,
        n_characters=261,
    )


def test_derived_sizes():
    architecture = BiLMArchitecture.from_options_json(OPTIONS)
    assert (architecture.n_filters, architecture.max_filter_width) == (8, 2)
    assert architecture.has_token_projection is False  # 8 filters = projection_dim 8
    assert architecture.has_lstm_projection is True
    assert (architecture.output_dim, architecture.n_output_layers) == (16, 3)


def test_written_options_json_reads_back_with_unknown_keys_kept():
    options = {**OPTIONS, "lstm": {**OPTIONS["lstm"], "custom": 1}, "note": "kept"}
    architecture = BiLMArchitecture.from_options_json(options)
    assert architecture.extra == {"note": "kept", "lstm.custom": 1}
    written = architecture.to_options_json()
    assert written["char_cnn"]["n_characters"] == 262  # inference options
    assert written["lstm"]["custom"] == 1 and written["note"] == "kept"
    assert architecture.to_options_json(n_characters=261)["char_cnn"] == OPTIONS["char_cnn"]
    assert BiLMArchitecture.from_options_json(written) == BiLMArchitecture.from_options_json({**options, "char_cnn": {**OPTIONS["char_cnn"], "n_characters": 262}})


def test_defaults_of_optional_keys():
    lstm = {"dim": 16}
    cnn = {"filters": [[1, 16]], "embedding": {"dim": 4}, "max_characters_per_token": 5}
    architecture = BiLMArchitecture.from_options_json({"lstm": lstm, "char_cnn": cnn})
    assert architecture.projection_dim == 16 and architecture.n_layers == 1 and architecture.n_highway == 0
    assert architecture.activation == "relu" and architecture.use_skip_connections is False
    assert architecture.cell_clip is None and architecture.n_characters == 262


@pytest.mark.parametrize(
    "options, message",
    [
        ([], "options.json: expected a JSON object, got list"),
        ({"char_cnn": OPTIONS["char_cnn"]}, "options.json: missing key 'lstm'"),
        ({"lstm": [], "char_cnn": OPTIONS["char_cnn"]}, "options.json: lstm must be an object"),
        ({"lstm": {}, "char_cnn": OPTIONS["char_cnn"]}, "options.json: missing key 'lstm.dim'"),
        ({"lstm": OPTIONS["lstm"], "char_cnn": {**OPTIONS["char_cnn"], "embedding": {}}}, "options.json: missing key 'char_cnn.embedding.dim'"),
        ({"lstm": OPTIONS["lstm"], "char_cnn": {**OPTIONS["char_cnn"], "filters": [1, 2]}}, "options.json: char_cnn.filters must be a list of [width, count] pairs"),
        ({"lstm": {**OPTIONS["lstm"], "dim": "wide"}, "char_cnn": OPTIONS["char_cnn"]}, "options.json: invalid value in options (invalid literal for int() with base 10: 'wide')"),
    ],
)
def test_malformed_options_json_is_named(options, message):
    with pytest.raises(ModelFormatError) as error:
        BiLMArchitecture.from_options_json(options, source="options.json")
    assert str(error.value) == message


def test_every_invalid_size_is_listed_at_once():
    with pytest.raises(ModelFormatError) as error:
        BiLMArchitecture(activation="gelu", n_characters=300, filters=((0, 4),), lstm_dim=8, projection_dim=16, n_highway=-1, cell_clip=0.0)
    assert str(error.value) == (
        "invalid biLM options: char_cnn.activation is 'gelu'; expected one of ('relu', 'tanh'); "
        "char_cnn.n_characters is 300; expected 261 or 262; char_cnn.filters has an invalid entry [0, 4]; "
        "char_cnn.n_highway must be >= 0, got -1; lstm.projection_dim (16) is larger than lstm.dim (8); "
        "the original format only projects down; lstm.cell_clip must be positive or null, got 0.0"
    )


def test_an_invalid_architecture_in_options_json_names_the_file():
    options = {**OPTIONS, "lstm": {**OPTIONS["lstm"], "n_layers": 0}}
    with pytest.raises(ModelFormatError, match=r"^my/options.json: invalid biLM options: n_layers must be positive, got 0$"):
        BiLMArchitecture.from_options_json(options, source="my/options.json")
