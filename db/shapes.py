"""GEMM shapes: parsing and validation of M, N, K, the reference grid, and the physical floor."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from cuda_l2_explorer.db.errors import UsageError

# cuBLAS takes int32 dimensions; anything larger cannot be a single HGEMM call.
MAX_DIM = 2**31 - 1

GRID_VALUES: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384)
GRID_MAX = GRID_VALUES[-1]

_INT_RE = re.compile(r"^\+?[0-9]+$")
_MNK_RE = re.compile(r"^([0-9]+)_([0-9]+)_([0-9]+)$")


@dataclass(frozen=True, order=True)
class Shape:
    m: int
    n: int
    k: int

    def __str__(self) -> str:
        return f"{self.m}_{self.n}_{self.k}"

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k

    @property
    def volume(self) -> int:
        return self.m * self.n * self.k

    @property
    def bytes(self) -> int:
        """fp16 bytes one call reads and writes: A, B (one layout) and C."""
        return 2 * (self.m * self.k + self.k * self.n + self.m * self.n)

    @property
    def input_set_bytes(self) -> int:
        """fp16 bytes of one of the harness's input sets: A, B in both layouts (SPEC §4) and C."""
        return 2 * (self.m * self.k + 2 * self.k * self.n + self.m * self.n)

    def covers(self, other: Shape) -> bool:
        """True when a kernel for this shape can run ``other`` by zero-padding."""
        return self.m >= other.m and self.n >= other.n and self.k >= other.k

    def log2_distance(self, other: Shape) -> float:
        return math.sqrt(
            sum(math.log2(a / b) ** 2 for a, b in zip(self.astuple(), other.astuple(), strict=True))
        )

    def astuple(self) -> tuple[int, int, int]:
        return (self.m, self.n, self.k)


def parse_dim(text: str | int, name: str = "dimension") -> int:
    """A GEMM dimension from user text: a positive decimal integer up to MAX_DIM, nothing else.

    '1e3', '0x40', '1.0', '10**12', '' and negative numbers are refused rather than guessed at.
    """
    if isinstance(text, bool):
        raise UsageError(f"{name} must be a positive integer, got {text!r}")
    if isinstance(text, int):
        value = text
    else:
        stripped = text.strip()
        if not _INT_RE.match(stripped):
            raise UsageError(f"{name} must be a positive integer, got {_shown(text)}")
        digits = stripped.lstrip("+").lstrip("0")
        if len(digits) > len(str(MAX_DIM)):
            # Checked on the text: int() refuses over 4300 digits, and a number this long is no GEMM.
            raise UsageError(
                f"{name} has {len(digits)} digits, larger than the largest GEMM dimension ({MAX_DIM})"
            )
        value = int(digits or "0")
    if value <= 0:
        raise UsageError(f"{name} must be a positive integer, got {_shown(text)}")
    if value > MAX_DIM:
        raise UsageError(f"{name}={value} is larger than the largest GEMM dimension ({MAX_DIM})")
    return value


def _shown(text: object, limit: int = 40) -> str:
    """User input as a message shows it: quoted, and cut short when long (it must fit one line)."""
    if isinstance(text, str) and len(text) > limit:
        return f"{text[:limit]!r}... ({len(text)} characters)"
    return repr(text)


def parse_shape(m: str | int, n: str | int, k: str | int) -> Shape:
    return Shape(parse_dim(m, "M"), parse_dim(n, "N"), parse_dim(k, "K"))


def parse_mnk(text: str) -> Shape:
    """'M_N_K' as used by the reference system's file names and CSVs."""
    match = _MNK_RE.match(text.strip())
    if not match:
        raise UsageError(f"shape must look like M_N_K (e.g. 64_4096_64), got {_shown(text)}")
    return parse_shape(*match.groups())


def grid_shapes() -> list[Shape]:
    return [Shape(m, n, k) for m in GRID_VALUES for n in GRID_VALUES for k in GRID_VALUES]


# SPEC §7 cold L2: the rotating input sets span at least L2_SPAN_FACTOR x the L2. The harness
# allocates at most ROTATION_CAP sets (and half the free memory). 64^3's 32 KiB sets span 2x a
# 50 MiB L2 at 3200, 2x a 126 MiB one at ~8100; each graph then holds as many calls (measured on an
# H100, 2026-11-24: 18 tiny configs in 22 s instead of 19). Runs recorded before that day capped
# at LEGACY_ROTATION_CAP: their tiny configs spanned as little as 0.04x the L2 and ran ~0.45 us a
# call faster, warm (benchmarks/harness/v3/ROTATION.md). A config spanning less than 2x (a
# smaller --rotation-cap, or the memory bound) carries L2_SPAN_FLAG, with its ratio (db.views).
L2_SPAN_FACTOR = 2.0
ROTATION_CAP = 8192
LEGACY_ROTATION_CAP = 64
L2_SPAN_FLAG = "l2-span-<2x"


def l2_span(sets: int, set_bytes: int, l2_bytes: int) -> float:
    """How many times ``sets`` input sets of ``set_bytes`` each span the L2."""
    return sets * set_bytes / l2_bytes


@dataclass(frozen=True)
class GpuPeaks:
    """Dense fp16 tensor-core peak and HBM bandwidth (SPEC §7, §10)."""

    tflops: float
    hbm_tbps: float


GPU_PEAKS: dict[str, GpuPeaks] = {
    "h100": GpuPeaks(tflops=989.0, hbm_tbps=3.35),
    "h200": GpuPeaks(tflops=989.0, hbm_tbps=4.8),
}


def floor_seconds(shape: Shape, gpu: str) -> float | None:
    """Physical lower bound on one HGEMM's time: compute or fp16 traffic, whichever is larger."""
    peaks = GPU_PEAKS.get(gpu)
    if peaks is None:
        return None
    compute = shape.flops / (peaks.tflops * 1e12)
    traffic = shape.bytes / (peaks.hbm_tbps * 1e12)
    return max(compute, traffic)


REGIMES = ("tiny", "skinny", "small-K", "large")
TINY_FLOOR_S = 5e-6  # a shape whose floor is under this is launch-bound ("tiny")


def regime(shape: Shape, gpu: str = "h100") -> str:
    """'tiny' (floor under 5 us: launch-bound), memory-bound 'skinny' (small M or N) or 'small-K',
    or compute-bound 'large', from the roofline of the GPU (H100 figures when unknown)."""
    peaks = GPU_PEAKS.get(gpu, GPU_PEAKS["h100"])
    compute = shape.flops / (peaks.tflops * 1e12)
    traffic = shape.bytes / (peaks.hbm_tbps * 1e12)
    if max(compute, traffic) < TINY_FLOOR_S:
        return "tiny"
    if traffic >= compute:
        return "small-K" if shape.k <= min(shape.m, shape.n) else "skinny"
    return "large"
