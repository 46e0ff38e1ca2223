"""The language check: a spaCy language code passes, anything else is one ConfigError naming it."""
import pytest

from spacy_elmo.errors import ConfigError
from spacy_elmo.languages import check_language


@pytest.mark.parametrize("code", ["en", "de", "zh", "xx"])
def test_spacy_languages_pass(code):
    assert check_language(code) == code


@pytest.mark.parametrize("code", ["english", "qq", ""])
def test_an_unknown_code_is_named_with_examples(code):
    with pytest.raises(ConfigError) as error:
        check_language(code)
    assert str(error.value) == f"spaCy has no language {code!r}; use a language code such as en, de, zh, xx (multi-language)"
    assert error.value.__cause__ is None and error.value.__suppress_context__
