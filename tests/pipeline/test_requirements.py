"""A pipeline built for another spacy-elmo version is refused in one line when it is loaded."""
import pytest
import spacy

from spacy_elmo import __version__
from spacy_elmo.errors import SpacyElmoError
from spacy_elmo.pipeline.requirements import check_requirement, required_spacy_elmo


def test_reads_the_specifier_spacy_package_writes():
    meta = {"requirements": ["spacy-elmo>=0.2.0,<0.3.0", "numpy"]}
    assert required_spacy_elmo(meta) in (">=0.2.0,<0.3.0", "<0.3.0,>=0.2.0")
    assert required_spacy_elmo({"requirements": ["numpy>=1"]}) is None
    check_requirement(meta, "0.2.5")
    with pytest.raises(SpacyElmoError, match=r"built for spacy-elmo.*0\.3\.0.*but spacy-elmo 0\.3\.1 is installed: pip install"):
        check_requirement({"lang": "en", "name": "elmo_web_base", "version": "0.1.0", **meta}, "0.3.1")


def test_loading_a_pipeline_for_another_version(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": "en_base"}})
    nlp.meta["requirements"] = ["spacy-elmo>=99.0"]
    nlp.to_disk(tmp_path / "nlp")
    with pytest.raises(SpacyElmoError, match=f"was built for spacy-elmo>=99.0, but spacy-elmo {__version__} is installed"):
        spacy.load(tmp_path / "nlp")
