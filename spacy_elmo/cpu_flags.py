"""What the CPU computes natively, from the flags Linux lists in /proc/cpuinfo (no torch here).

bfloat16 products are fast on CPUs with AVX512-BF16 or AMX; elsewhere torch emulates them in
float32, and a bfloat16 biLM runs slower than a float32 one.
"""
import warnings
from pathlib import Path
from typing import FrozenSet, Optional

CPUINFO = Path("/proc/cpuinfo")
NATIVE_BFLOAT16 = ("avx512_bf16", "amx_bf16")


def read_cpu_flags() -> Optional[FrozenSet[str]]:
    """The flags of the first CPU in /proc/cpuinfo; None where there is no such file (not Linux)."""
    try:
        text = CPUINFO.read_text(encoding="utf8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return None


def warn_if_bfloat16_is_emulated() -> None:
    """Warn, in one line, that bfloat16 was asked for on a CPU without native bfloat16 (known
    from its flags; where they cannot be read, say nothing)."""
    flags = read_cpu_flags()
    if flags is None or any(flag in flags for flag in NATIVE_BFLOAT16):
        return
    warnings.warn(
        f"compute dtype bfloat16 on this CPU (no {' or '.join(NATIVE_BFLOAT16)}) is emulated and slower than "
        "float32; use float32 (exact) or int8 (faster)",
        stacklevel=3,
    )
