"""What every kernel family's compile-time config shares: its error type, B's layouts, the target's limits,
the dict round trip and content hash.

The family modules (tuner/catalog.py for CUTLASS SM90, tuner/tiny.py and tuner/wgmma.py for our own kernels)
build on this; tuner/families.py ties them together. Nothing here imports a family.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
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


def check_fields(
    cfg: ConfigRecord,
    family: str,
    positive: Sequence[str],
    allowed: Mapping[str, tuple[int, ...]] | None = None,
) -> None:
    """The checks every family's ``validate`` starts with: its family name, B's layout, the fields
    that must be positive ints and those limited to a set of values."""
    if cfg.family != family:
        raise ConfigError(f"family must be {family!r}, got {cfg.family!r}")
    if cfg.b_major not in B_MAJORS:
        raise ConfigError(f"b_major must be one of {B_MAJORS}, got {cfg.b_major!r}")
    for f in positive:
        if not is_positive_int(getattr(cfg, f)):
            raise ConfigError(f"{f} must be a positive int, got {getattr(cfg, f)!r}")
    for f, values in (allowed or {}).items():
        if getattr(cfg, f) not in values:
            raise ConfigError(f"{f} must be one of {values}, got {getattr(cfg, f)}")


class ConfigRecord:
    """The dict round trip, content hash and C tile every family's frozen config dataclass shares.
    (The annotations name fields each family declares; this base is not a dataclass.)"""

    family: str
    b_major: BMajor
    tile_m: int
    tile_n: int

    def user_tile(self) -> tuple[int, int]:
        """(rows of C, columns of C) one CTA covers; a family that swaps A and B overrides this."""
        return (self.tile_m, self.tile_n)

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
