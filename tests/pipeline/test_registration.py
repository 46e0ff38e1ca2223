"""Registration: setup.cfg's entry points name every registered function, spaCy finds them in a
fresh process without importing spacy_elmo first, the registered signatures are the settings
dataclasses' fields with their defaults, each parameter lands on its same-named field, and the
package makes its settings dataclasses by keyword alone (a reordered field mis-assigns nothing)."""
import ast
import configparser
import dataclasses
import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest
import spacy
from spacy.language import Language
from spacy.util import registry
from thinc.api import Model

import spacy_elmo.coref.corpus  # noqa: F401
import spacy_elmo.coref.scoring  # noqa: F401
import spacy_elmo.pipeline.component  # noqa: F401
from spacy_elmo import architectures  # registers the architectures
from spacy_elmo.architectures import build_elmo_model_v1, build_elmo_model_v2
from spacy_elmo.errors import ConfigError
from spacy_elmo.layers.elmo_model import ElmoModelSettings
from spacy_elmo.pipeline.component import make_elmo
from spacy_elmo.pipeline.settings import ElmoSettings
from spacy_elmo.registry_names import ELMO_MODEL, ELMO_MODEL_V1

REPO = Path(__file__).resolve().parents[2]
REGISTRIES = {"spacy_architectures": "architectures", "spacy_readers": "readers", "spacy_scorers": "scorers"}


def setup_cfg_entry_points() -> Dict[str, Dict[str, str]]:
    """Entry points by group, as setup.cfg declares them: {group: {name: "module:attr"}}."""
    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg")
    groups: Dict[str, Dict[str, str]] = {}
    for group, block in parser["options.entry_points"].items():
        lines = [line.strip() for line in block.strip().splitlines() if line.strip()]
        groups[group] = dict(tuple(part.strip() for part in line.split("=", 1)) for line in lines)
    return groups


def test_every_registered_name_has_its_entry_point():
    declared = setup_cfg_entry_points()
    for group, registry_name in REGISTRIES.items():
        ours = {name for name in getattr(registry, registry_name).get_all() if name.startswith("spacy-elmo.")}
        assert set(declared.get(group, {})) == ours, group
        for name, target in declared[group].items():
            module, attr = target.split(":")
            assert getattr(sys.modules[module], attr) is getattr(registry, registry_name).get(name), name
    assert declared["spacy_factories"] == {
        "elmo": "spacy_elmo.pipeline.component:make_elmo",
        "elmo_coref": "spacy_elmo.coref.component:make_elmo_coref",
    }


def test_the_registry_name_constants_are_the_entry_points():
    from spacy_elmo import registry_names

    constants = {value for name, value in vars(registry_names).items() if name.isupper()}
    declared = {name for group in [*REGISTRIES, "spacy_factories"] for name in setup_cfg_entry_points()[group]}
    assert constants == declared


def test_entry_points_resolve_in_a_fresh_process():
    """In a new interpreter spaCy finds each name through the installed entry points alone."""
    names = {registry_name: sorted(setup_cfg_entry_points()[group]) for group, registry_name in REGISTRIES.items()}
    script = f"""
import json, sys
from spacy.util import registry
import spacy
assert "spacy_elmo" not in sys.modules
found = {{}}
for registry_name, names in {names!r}.items():
    for name in names:
        function = getattr(registry, registry_name).get(name)
        found[name] = function.__module__ + ":" + function.__name__
nlp = spacy.blank("en")
nlp.add_pipe("elmo")
found["elmo"] = type(nlp.get_pipe("elmo")).__module__
print(json.dumps(found))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO.parent)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    for group in REGISTRIES:
        for name, target in setup_cfg_entry_points()[group].items():
            assert found[name] == target, name
    assert found["elmo"] == "spacy_elmo.pipeline.component"


def _parameters(function) -> Dict[str, object]:
    return {name: p.default for name, p in inspect.signature(function).parameters.items()}


def test_the_model_architecture_takes_the_settings_fields_and_defaults():
    expected = {field.name: field.default for field in dataclasses.fields(ElmoModelSettings)}
    assert _parameters(build_elmo_model_v2) == expected
    assert ElmoModelSettings().to_config()["@architectures"] == "spacy-elmo.ElmoModel.v2"


def test_v1_takes_the_same_settings_with_dtype_and_runs_on_torch():
    fields = {field.name: field.default for field in dataclasses.fields(ElmoModelSettings) if field.name != "runtime"}
    v1 = {("dtype" if name == "compute_dtype" else name): default for name, default in fields.items()}
    assert _parameters(build_elmo_model_v1) == v1
    settings = build_elmo_model_v1(dtype="bf16", window=32, stride=16).attrs["settings"]
    assert (settings.compute_dtype, settings.runtime, settings.window) == ("bfloat16", "torch", 32)
    with pytest.raises(ConfigError, match="^elmo model: unknown 'dtype' 'float64'"):
        build_elmo_model_v1(dtype="float64")


def test_the_factory_takes_the_component_settings_and_their_defaults():
    parameters = _parameters(make_elmo)
    assert list(parameters)[:2] == ["nlp", "name"]
    fields = [field.name for field in dataclasses.fields(ElmoSettings)]
    assert sorted(parameters) == sorted(["nlp", "name", "model", *fields])
    defaults = Language.get_factory_meta("elmo").default_config
    assert {name: defaults[name] for name in fields} == dataclasses.asdict(ElmoSettings())
    assert defaults["model"] == ElmoModelSettings().to_config()


# A value for each model setting, none of them its default and no two alike, so that a parameter
# handed on to another field shows there. Runtime "onnxruntime" refuses keep_softmax, so each
# of the two is set apart from the other.
MODEL_VALUES = {
    "bilm": "some/bilm",
    "options": "some/options.json",
    "context": "doc",
    "window": 40,
    "stride": 24,
    "batch_size": 3,
    "max_tokens": 99,
    "device": "cpu",
    "compute_dtype": "int8",
}
MODEL_CASES = [{**MODEL_VALUES, "keep_softmax": True}, {**MODEL_VALUES, "runtime": "onnxruntime"}]


def _settings_of_the_block(monkeypatch, name, values):
    """The settings the registered model block `name` makes from `values` (no model is built)."""
    monkeypatch.setattr(architectures, "build_elmo_model", lambda settings: settings)
    return registry.architectures.get(name)(**values)


def _not_defaults(values, settings_type):
    defaults = {field.name: field.default for field in dataclasses.fields(settings_type)}
    return all(value != defaults[key] for key, value in values.items())


def test_every_v2_parameter_lands_on_its_settings_field(monkeypatch):
    assert set().union(*MODEL_CASES) == {field.name for field in dataclasses.fields(ElmoModelSettings)}
    for values in MODEL_CASES:
        assert _not_defaults(values, ElmoModelSettings)
        settings = _settings_of_the_block(monkeypatch, ELMO_MODEL, values)
        assert {key: getattr(settings, key) for key in values} == values


def test_every_v1_parameter_lands_on_its_settings_field_and_v1_runs_on_torch(monkeypatch):
    values = MODEL_CASES[0]
    v1 = {("dtype" if key == "compute_dtype" else key): value for key, value in values.items()}
    assert set(v1) == set(_parameters(build_elmo_model_v1))
    settings = _settings_of_the_block(monkeypatch, ELMO_MODEL_V1, v1)
    assert {key: getattr(settings, key) for key in values} == values
    assert settings.runtime == "torch"


def test_every_factory_setting_lands_on_its_component_settings_field():
    values = {
        "layer": "mix",
        "mix_weights": [0.5, -0.5, 1.5],
        "mix_gamma": 2.5,
        "store": "selected",
        "set_vectors": True,
        "frozen": False,
        "feature_cache_mb": 7,
    }
    assert set(values) == {field.name for field in dataclasses.fields(ElmoSettings)}
    assert _not_defaults(values, ElmoSettings)
    nlp = spacy.blank("en")
    component = make_elmo(nlp, "elmo", Model("stand_in", lambda model, docs, is_train: (docs, None)), **values)
    assert dataclasses.asdict(component.settings) == values


def _settings_classes(trees):
    """The names of the package's settings dataclasses (a dataclass whose name ends in Settings)."""
    return {
        node.name
        for tree in trees.values()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and node.name.endswith("Settings")
        and any("dataclass" in ast.unparse(decorator) for decorator in node.decorator_list)
    }


def test_the_package_makes_settings_and_calls_the_model_blocks_by_keyword():
    """Python 3.9 has no kw_only dataclasses: a positional call would take a reordered field's place."""
    trees = {path: ast.parse(path.read_text(encoding="utf8")) for path in sorted((REPO / "spacy_elmo").rglob("*.py"))}
    names = _settings_classes(trees)
    assert {"ElmoModelSettings", "ElmoSettings", "EmbedSettings", "TrainingSettings"} <= names
    names |= {build_elmo_model_v1.__name__, build_elmo_model_v2.__name__}
    positional = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if called in names:
                positional.append(f"{path.relative_to(REPO)}:{node.lineno} {called}")
    assert not positional, f"positional arguments (name each setting): {', '.join(positional)}"
