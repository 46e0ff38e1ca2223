"""Which type a computation runs in under mixed precision."""

import torch


def product_dtype(device_type: str, dtype: torch.dtype) -> torch.dtype:
    """The type of matrix products: autocast's where it is on for `device_type`, else `dtype`."""
    if torch.is_autocast_enabled(device_type):
        return torch.get_autocast_dtype(device_type)
    return dtype


def accumulation_dtype(dtype: torch.dtype) -> torch.dtype:
    """Gates, states, exponentials and sums: float32 when the products run in a 16-bit type."""
    return torch.promote_types(dtype, torch.float32)
