"""project.yml loads the same under spaCy 3.7's confection (the coref environment) as under 3.8."""
from pathlib import Path

import srsly

REPO = Path(__file__).resolve().parents[2]


def test_no_var_is_a_quoted_number():
    # confection 0.1.5 re-parses an interpolated "0" as a number and then hands weasel every
    # command as one string ("string indices must be integers" in `spacy project run`).
    variables = srsly.read_yaml(REPO / "project.yml")["vars"]
    quoted_numbers = [name for name, value in variables.items() if isinstance(value, str) and value.lstrip("-").isdigit()]
    assert quoted_numbers == []
