"""`PipeRows`, the actor `pipe_dataset` runs, called in this process (no Ray cluster): entities and
the chosen annotations of each row, the columns kept, rows without text, a pipeline that cannot
load; and the arguments `pipe_dataset` hands to Ray Data (an ELMo pipeline on a local Ray:
test_ray_data.py)."""
import pytest
import spacy

pytest.importorskip("ray", reason="the ray extra is not installed")
pa = pytest.importorskip("pyarrow")

from spacy_elmo.errors import SpacyElmoError  # noqa: E402
from spacy_elmo.ray_data.pipe import ANNOTATIONS, PipeRows, pipe_dataset  # noqa: E402

from .helpers import FakeDataset  # noqa: E402


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """A saved pipeline that finds two kinds of entity by rule and splits sentences on punctuation."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "PERSON", "pattern": "Alice"}, {"label": "GPE", "pattern": [{"LOWER": "new"}, {"LOWER": "york"}]}])
    path = tmp_path_factory.mktemp("pipeline") / "rules"
    nlp.to_disk(path)
    return str(path)


def test_rows_get_the_entities_and_annotations_of_their_text_and_keep_their_columns(pipeline):
    rows = PipeRows(pipeline, "body", ["tokens", "sentences"], vector=False, threads=1)
    batch = pa.table({"id": [1, 2, 3], "body": ["Alice flew to New York. She liked it.", None, "Nothing here"], "tokens": ["stale"] * 3})
    out = rows(batch)
    assert out.column_names == ["id", "body", "entities", "tokens", "sentences"]
    assert out["id"].to_pylist() == [1, 2, 3] and out["body"].to_pylist() == batch["body"].to_pylist()
    assert out["entities"].to_pylist() == [
        [{"start": 0, "end": 5, "label": "PERSON", "text": "Alice"}, {"start": 14, "end": 22, "label": "GPE", "text": "New York"}],
        [],
        [],
    ]
    assert out["tokens"].to_pylist() == [
        ["Alice", "flew", "to", "New", "York", ".", "She", "liked", "it", "."],
        [],
        ["Nothing", "here"],
    ]
    assert out["sentences"].to_pylist() == [[{"start": 0, "end": 23}, {"start": 24, "end": 37}], [], [{"start": 0, "end": 12}]]


def test_a_row_without_text_gets_empty_lists_and_a_null_vector(pipeline):
    rows = PipeRows(pipeline, "text", list(ANNOTATIONS), vector=True, threads=1)
    out = rows(pa.table({"text": [None, 7]}))
    assert out.column_names == ["text", "entities", *ANNOTATIONS, "vector"]
    for name in ("entities", *ANNOTATIONS):
        assert out[name].to_pylist() == [[], []]
    assert out["vector"].to_pylist() == [None, None]
    assert out.schema.field("vector").type == pa.list_(pa.float32())


def test_a_pipeline_that_cannot_load_names_itself(tmp_path):
    with pytest.raises(SpacyElmoError, match=r"cannot load the spaCy pipeline '.*nope' on this worker"):
        PipeRows(str(tmp_path / "nope"), "text", (), vector=False, threads=1)


def test_pipe_dataset_asks_for_an_actor_pool_of_the_pipeline(tmp_path):
    ds = FakeDataset()
    result = pipe_dataset(
        ds, tmp_path / "ner", text_column="body", annotations=["tags"], vector=True, batch_size=8, concurrency=2, num_cpus=3
    )
    assert result == "mapped" and ds.fn is PipeRows
    assert ds.kwargs["fn_constructor_args"] == (str(tmp_path / "ner"), "body", ("tags",), True, 3)
    assert (ds.kwargs["batch_size"], ds.kwargs["batch_format"], ds.kwargs["num_cpus"], ds.kwargs["num_gpus"]) == (8, "pyarrow", 3, 0)
    assert ds.kwargs["compute"].min_size == ds.kwargs["compute"].max_size == 2


def test_pipe_dataset_refuses_unknown_annotations_before_ray():
    ds = FakeDataset()
    with pytest.raises(SpacyElmoError, match=r"unknown annotations \['ents', 'lemma'\]; choose from tokens, tags, pos, lemmas, sentences"):
        pipe_dataset(ds, "unused", annotations=["tokens", "lemma", "ents"])
    assert not hasattr(ds, "fn")
