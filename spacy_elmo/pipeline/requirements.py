"""The spacy-elmo version a saved pipeline asks for: its meta's `requirements`, as `spacy
package` writes them, checked when the `elmo` component is created for it."""
from typing import Any, Dict, Optional

from ..errors import SpacyElmoError

PACKAGE = "spacy-elmo"


def required_spacy_elmo(meta: Dict[str, Any]) -> Optional[str]:
    """The version specifier a pipeline's meta gives for spacy-elmo (e.g. ">=0.2.0,<0.3.0"), if any."""
    from packaging.requirements import InvalidRequirement, Requirement

    for line in meta.get("requirements") or []:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.name.replace("_", "-").lower() == PACKAGE:
            return str(requirement.specifier)
    return None


def check_requirement(meta: Dict[str, Any], installed: str) -> None:
    """Refuse, in one line, a pipeline built for a spacy-elmo version other than `installed`."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    wanted = required_spacy_elmo(meta)
    if wanted and not SpecifierSet(wanted).contains(Version(installed), prereleases=True):
        name = f"{meta.get('lang', '')}_{meta.get('name', '')} {meta.get('version', '')}".strip()
        raise SpacyElmoError(
            f"the pipeline {name} was built for {PACKAGE}{wanted}, but {PACKAGE} {installed} is installed: "
            f"pip install '{PACKAGE}{wanted}'"
        )
