"""bfloat16 on a CPU that only emulates it: one warning naming the faster choices."""
import warnings

import pytest
import spacy

from spacy_elmo import cpu_flags
from spacy_elmo.bilm.quantization import to_compute_dtype

from .conftest import random_bilm

EMULATED = "compute dtype bfloat16 on this CPU (no avx512_bf16 or amx_bf16) is emulated and slower than float32; use float32 (exact) or int8 (faster)"


def test_the_flags_are_read_from_cpuinfo(tmp_path, monkeypatch):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512_bf16\n\nprocessor\t: 1\nflags\t\t: fpu\n")
    monkeypatch.setattr(cpu_flags, "CPUINFO", cpuinfo)
    assert cpu_flags.read_cpu_flags() == {"fpu", "avx2", "avx512_bf16"}
    monkeypatch.setattr(cpu_flags, "CPUINFO", tmp_path / "missing")  # not Linux
    assert cpu_flags.read_cpu_flags() is None


@pytest.mark.parametrize(
    "flags,warned",
    [(frozenset({"avx2", "avx512f"}), True), (frozenset({"avx2", "avx512_bf16"}), False), (frozenset({"amx_bf16"}), False), (None, False)],
)
def test_bfloat16_warns_once_where_it_is_emulated(monkeypatch, flags, warned):
    monkeypatch.setattr(cpu_flags, "read_cpu_flags", lambda: flags)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        to_compute_dtype(random_bilm(), "cpu", "bfloat16")
        to_compute_dtype(random_bilm(), "cpu", "float32")
        to_compute_dtype(random_bilm(), "cpu", "int8")
    assert [str(w.message) for w in caught] == ([EMULATED] if warned else [])


def test_the_component_warns_once(monkeypatch, model_files):
    monkeypatch.setattr(cpu_flags, "read_cpu_flags", lambda: frozenset({"avx2"}))
    weights, options = model_files
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": str(weights), "options": str(options), "device": "cpu", "compute_dtype": "bfloat16"}})
    with pytest.warns(UserWarning) as caught:
        nlp.initialize()
        nlp("A cat sat.")
    assert [str(w.message) for w in caught] == [EMULATED]
