"""What every kernel family's compile-time config shares: its error type, B's layouts, the target's limits.

The family modules (tuner/catalog.py for CUTLASS SM90, tuner/tiny.py for our tiny-shape kernels)
build on this; tuner/families.py ties them together. Nothing here imports a family.
"""

from __future__ import annotations

from typing import Literal

BMajor = Literal["n", "k"]
B_MAJORS: tuple[str, ...] = ("n", "k")

SMEM_BYTES_SM90 = 227 * 1024  # opt-in dynamic shared memory per block on H100/H200
ELEM_BYTES = 2  # fp16


class ConfigError(ValueError):
    """A kernel config its family cannot instantiate (or that we do not support)."""
