"""The spaCy language whose tokenizer feeds a biLM: a code checked before any model loads."""
from .errors import ConfigError

EXAMPLES = "en, de, zh, xx (multi-language)"


def check_language(code: str) -> str:
    """`code` if spaCy has a language of that code, else a ConfigError naming it."""
    from spacy.util import get_lang_class

    try:
        get_lang_class(code)
    except ImportError:
        raise ConfigError(f"spaCy has no language {code!r}; use a language code such as {EXAMPLES}") from None
    return code
