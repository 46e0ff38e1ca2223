"""`runtime_switch`: what a saved config says about each elmo component's runtime
(`elmo_states`), and the outputs `set_runtime` refuses before it loads anything.

The switches themselves (torch <-> ONNX Runtime, float32 <-> int8, v1 pipelines, recovering the
torch weights of a graph) are tested through the command in tests/cli/test_set_runtime.py."""
from pathlib import Path

import pytest

from spacy_elmo.pipeline.runtime_switch import ElmoState, elmo_states, set_runtime

CONFIG = """
[components]

[components.tagger]
factory = "tagger"

[components.elmo]
factory = "elmo"

[components.elmo.model]
@architectures = "spacy-elmo.ElmoModel.v2"
bilm = "en_base"
runtime = "onnxruntime"
compute_dtype = "int8"

[components.old]
factory = "elmo"

[components.old.model]
@architectures = "spacy-elmo.ElmoModel.v1"
dtype = "bf16"

[components.plain]
factory = "elmo"

[components.plain.model]
@architectures = "spacy-elmo.ElmoModel.v2"
"""


def pipeline(folder: Path, config: str = CONFIG) -> Path:
    folder.mkdir()
    (folder / "config.cfg").write_text(config, encoding="utf8")
    return folder


def test_each_elmo_component_and_where_its_biLM_runs(tmp_path: Path):
    states = elmo_states(pipeline(tmp_path / "nlp"))
    assert [(s.name, s.architecture, s.runtime, s.compute_dtype, s.dtype_key, s.label) for s in states] == [
        ("elmo", "spacy-elmo.ElmoModel.v2", "onnxruntime", "int8", "compute_dtype", "onnxruntime int8"),
        ("old", "spacy-elmo.ElmoModel.v1", "torch", "bfloat16", "dtype", "torch bfloat16"),
        ("plain", "spacy-elmo.ElmoModel.v2", "torch", "float32", "compute_dtype", "torch float32"),
    ]
    assert states[0].block["bilm"] == "en_base"
    assert states[0] == ElmoState("elmo", "spacy-elmo.ElmoModel.v2", "onnxruntime", "int8")  # the block is not compared


def test_a_component_without_a_model_block_points_to_upgrade_config(tmp_path: Path):
    folder = pipeline(tmp_path / "nlp", '[components]\n\n[components.elmo]\nfactory = "elmo"\nmodel = "en_base"\n')
    with pytest.raises(ValueError, match=r"the elmo component 'elmo' has no spacy-elmo.ElmoModel.v2 \(or v1\) model block; rewrite its config with: python -m spacy_elmo upgrade-config$"):
        elmo_states(folder)


@pytest.mark.parametrize(
    "config,message",
    [
        (None, "is not a saved spaCy pipeline \\(no config.cfg in it\\)$"),
        ("[components\n", "config.cfg: cannot read it: "),
        ('[components]\n\n[components.tagger]\nfactory = "tagger"\n', "has no elmo component$"),
    ],
)
def test_what_is_not_a_pipeline_with_elmo_is_one_error_naming_it(tmp_path: Path, config, message):
    folder = pipeline(tmp_path / "nlp", config) if config is not None else tmp_path / "nlp"
    with pytest.raises(ValueError, match=f"^{folder}.*{message}"):
        elmo_states(folder)


def test_the_copy_may_not_replace_or_enclose_the_pipeline(tmp_path: Path):
    source = pipeline(tmp_path / "nlp")
    for output in (source, tmp_path):
        with pytest.raises(ValueError, match=f"^{output} holds the pipeline {source}; write the copy to another folder$"):
            set_runtime(source, output, "torch", force=True)
    (tmp_path / "taken").mkdir()
    with pytest.raises(ValueError, match=f"^{tmp_path / 'taken'} exists; pass --force to replace it$"):
        set_runtime(source, tmp_path / "taken", "torch")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nlp", "taken"]
