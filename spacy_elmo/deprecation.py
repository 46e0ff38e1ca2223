"""Old keyword names that keep working, with a DeprecationWarning naming the new one."""
import warnings
from typing import Any


def renamed(where: str, old: str, new: str, old_value: Any, new_value: Any) -> Any:
    """`new_value`, or `old_value` (with a warning) where the caller passed the old keyword."""
    if old_value is None:
        return new_value
    warnings.warn(f"{where}: {old} is deprecated; use {new}", DeprecationWarning, stacklevel=3)
    return old_value
