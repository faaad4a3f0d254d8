"""What every kernel family's compile-time config shares: its error type, B's layouts, the target's limits,
the dict round trip and content hash.

The family modules (tuner/catalog.py for CUTLASS SM90, tuner/tiny.py and tuner/wgmma.py for our own kernels)
build on this; tuner/families.py ties them together. Nothing here imports a family.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, fields
from typing import Any, Literal, Self

BMajor = Literal["n", "k"]
B_MAJORS: tuple[str, ...] = ("n", "k")

SMEM_BYTES_SM90 = 227 * 1024  # opt-in dynamic shared memory per block on H100/H200
ELEM_BYTES = 2  # fp16


def is_positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


class ConfigError(ValueError):
    """A kernel config its family cannot instantiate (or that we do not support)."""


class ConfigRecord:
    """The dict round trip and content hash every family's frozen config dataclass shares."""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        unknown = set(data) - {f.name for f in fields(cls)}  # type: ignore[arg-type]
        if unknown:
            raise ConfigError(f"unknown {cls.__name__} fields: {sorted(unknown)}")
        return cls(**data)

    @property
    def config_hash(self) -> str:
        """Content hash of the parameters (stable across runs and machines)."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:12]
