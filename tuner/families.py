"""The kernel families of our library, in one registry: what each supports, its ABI, its source.

A family is a kind of kernel with its own compile-time config type (``family`` field of every
config, manifest entry, library registry row and store row) and its own CUDA source. Every check
that depends on the family (shapes it runs, runtime variants worth sweeping, whether a TU needs
CUTLASS headers, how its source is rendered, how a config dict is parsed) reads :data:`FAMILIES`.

To add a family: a module with its config dataclass (``name``, ``family``, ``to_dict`` /
``from_dict``, ``config_hash``, ``user_tile``) and a ``render_tu`` emitting the C ABI of
tuner/abi.py, then one :class:`Family` entry below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cuda_l2_explorer.db.shapes import MAX_DIM
from cuda_l2_explorer.tuner import emit, tiny, wgmma
from cuda_l2_explorer.tuner.abi import ABI_VERSION, STATUS_NAMES
from cuda_l2_explorer.tuner.catalog import SM90_FAMILY, KernelConfig, first_catalog
from cuda_l2_explorer.tuner.config import ConfigError
from cuda_l2_explorer.tuner.templates import read_text
from cuda_l2_explorer.tuner.tiny import TINY_FAMILY, TinyConfig
from cuda_l2_explorer.tuner.wgmma import WGMMA_FAMILY, WgmmaConfig

AnyConfig = KernelConfig | TinyConfig | WgmmaConfig

# Runtime ``decomposition`` argument of every entry point (tuner/native.py names them).
_DATA_PARALLEL = (0, 1)  # heuristic, data parallel
_SPLIT_K, _STREAM_K = 2, 3


@dataclass(frozen=True)
class Family:
    """One kernel family: its config type, what its kernels support, its ABI and its source."""

    name: str  # the ``family`` value of its configs
    summary: str
    config_type: type[KernelConfig] | type[TinyConfig] | type[WgmmaConfig]
    catalog: Callable[[], list[Any]]  # the configs the library ships
    render_tu: Callable[[Sequence[Any]], str]  # one translation unit of its configs
    sources: tuple[str, ...]  # its CUDA source files (tuner.templates resource names)
    needs_cutlass: bool  # its sources include CUTLASS headers
    alignment: int = 8  # N and K multiples of this (16-byte rows of fp16)
    runtime_shapes: bool = True  # M, N, K are runtime arguments: one kernel serves every shape
    size_limits: str = ""  # beyond alignment, what limits a shape (said to users)
    max_dim: int = MAX_DIM  # M, N and K are C ints in the ABI
    max_m_tiles: int | None = None  # a grid dimension holds the M tiles (tile_m rows each)
    sweeps_raster: bool = True  # raster order and swizzle change what it does
    decompositions: Callable[[Mapping[str, Any]], tuple[int, ...]] = lambda params: _DATA_PARALLEL
    max_splits: int | None = None  # split-K bound it enforces (None: its scheduler decides)
    # What limits one kernel of the family beyond the rules above (its params decide), or None.
    kernel_limits: Callable[[int, int, int, Mapping[str, Any] | None], str | None] = lambda m, n, k, params: (
        None
    )
    # Split-K partials go through global memory (written, then read back by a fix-up), or not.
    split_partials_in_memory: bool = True
    abi_version: int = ABI_VERSION
    statuses: Mapping[int, str] = field(default_factory=lambda: dict(STATUS_NAMES))

    def why_not(self, m: int, n: int, k: int, params: Mapping[str, Any] | None = None) -> str | None:
        """Why its kernels cannot run (M, N, K), None when they can: the entry points' shape checks,
        from the limits above (``params``: one kernel's config, for the limits that depend on it)."""
        if min(m, n, k) < 1:
            return "M, N and K must be positive"
        if n % self.alignment or k % self.alignment:
            return f"N and K must be multiples of {self.alignment}"
        if max(m, n, k) > self.max_dim:
            return f"M, N and K must be at most {self.max_dim}"
        if why := self.kernel_limits(m, n, k, params):
            return why
        tile_m = int((params or {}).get("tile_m") or 0)
        if self.max_m_tiles is not None and tile_m and -(-m // tile_m) > self.max_m_tiles:
            return (
                f"M must be at most {self.max_m_tiles * tile_m} ({self.max_m_tiles} tiles of {tile_m} rows)"
            )
        return None

    def supports(self, m: int, n: int, k: int, params: Mapping[str, Any] | None = None) -> bool:
        """Whether its kernels can run (M, N, K) (see :meth:`why_not`)."""
        return self.why_not(m, n, k, params) is None

    def shape_rule(self) -> str:
        return f"any M; N and K multiples of {self.alignment}"


def _sm90_decompositions(params: Mapping[str, Any]) -> tuple[int, ...]:
    """Persistent kernels run data parallel only; stream-K kernels also split-K and stream-K."""
    return (*_DATA_PARALLEL, _SPLIT_K, _STREAM_K) if params.get("scheduler") == "streamk" else _DATA_PARALLEL


# What our own two families share (tuner/csrc/split_k_cluster.cuh): one wave, no raster, split-K
# over the CTAs of one cluster, reduced over distributed shared memory.
_CLUSTER_SPLIT_K: dict[str, Any] = dict(
    max_m_tiles=tiny.MAX_M_TILES,
    sweeps_raster=False,
    decompositions=lambda params: (*_DATA_PARALLEL, _SPLIT_K),
    max_splits=tiny.MAX_SPLITS,
    split_partials_in_memory=False,
)

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            name=SM90_FAMILY,
            summary="CUTLASS 3.x SM90 collective-builder HGEMM (TMA, wgmma, warp-specialised, persistent "
            "or stream-K tile scheduler, optional swap-AB)",
            config_type=KernelConfig,
            catalog=first_catalog,
            render_tu=emit.render_tu,
            sources=(emit.PREAMBLE, emit.KERNEL_TEMPLATE, emit.CONVERT_EPILOGUE, emit.ONE_BUFFER_EPILOGUE),
            needs_cutlass=True,
            size_limits="CUTLASS can_implement decides (TMA: 16-byte aligned rows)",
            decompositions=_sm90_decompositions,
        ),
        Family(
            name=TINY_FAMILY,
            summary="our tiny-shape HGEMM (mma.sync, ldmatrix, cp.async; one CTA per tile; one-launch "
            "split-K)",
            config_type=TinyConfig,
            catalog=tiny.tiny_catalog,
            render_tu=tiny.render_tu,
            sources=(
                tiny.PREAMBLE,
                tiny.SPLIT_K_CLUSTER,
                tiny.TIMELINE,
                tiny.KERNEL_TEMPLATE,
                tiny.DIRECT_KERNEL_TEMPLATE,
            ),
            needs_cutlass=False,
            size_limits="M up to 65535 tiles (grid y); A, B and C 16-byte aligned; a direct or bulk "
            "kernel K up to its tile_k",
            **{
                **_CLUSTER_SPLIT_K,
                # a register-direct or bulk-fed kernel holds all of K: no split-K
                "decompositions": lambda params: (
                    _DATA_PARALLEL
                    if params.get("loads") in tiny.ONE_PASS_LOADS
                    else (*_DATA_PARALLEL, _SPLIT_K)
                ),
                "kernel_limits": tiny.why_not_shape,
            },
        ),
        Family(
            name=WGMMA_FAMILY,
            summary="our deep-K split-K HGEMM (TMA, wgmma, one or two consumer warpgroups; splits reduced "
            "on chip across a cluster)",
            config_type=WgmmaConfig,
            catalog=wgmma.wgmma_catalog,
            render_tu=wgmma.render_tu,
            sources=(wgmma.PREAMBLE, tiny.SPLIT_K_CLUSTER, tiny.TIMELINE, wgmma.KERNEL_TEMPLATE),
            needs_cutlass=True,  # CuTe's GMMA and TMA atoms
            size_limits="M up to 65535 tiles (grid y); A, B and C 16-byte aligned (TMA)",
            **_CLUSTER_SPLIT_K,
        ),
    )
}
DEFAULT_FAMILY = SM90_FAMILY  # what a parameter set without a ``family`` field describes
# The N and K alignment a shape needs for every family of ours to run it.
RUNTIME_SHAPE_ALIGNMENT = max(f.alignment for f in FAMILIES.values())


def pinned_cutlass() -> str:
    """The nvidia-cutlass wheel version our CUTLASS-based sources are written against (cutlass/VERSION)."""
    return read_text("cutlass/VERSION").strip()


def cutlass_series() -> str:
    """Major.minor of :func:`pinned_cutlass` (what a build must match), e.g. ``4.2``."""
    return ".".join(pinned_cutlass().split(".")[:2])


def family_of(what: str | Mapping[str, Any] | AnyConfig) -> Family:
    """The family of a config, of a parameter dict (no ``family``: the default one), or of a name."""
    if isinstance(what, str):
        name = what
    elif isinstance(what, Mapping):
        name = what.get("family", DEFAULT_FAMILY)
    else:
        name = what.family
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown kernel family {name!r}") from None


def kernel_from_dict(data: Mapping[str, Any]) -> AnyConfig:
    """The config a ``to_dict()`` (or a library registry's parameters) describes, by ``family``."""
    if "family" not in data:
        raise ConfigError("kernel parameters name no family")
    return family_of(data).config_type.from_dict(dict(data))


def full_catalog() -> list[AnyConfig]:
    """Everything the library ships: every family's catalog, families in registry order."""
    return [config for family in FAMILIES.values() for config in family.catalog()]


def render_tu(configs: Sequence[AnyConfig]) -> str:
    """One translation unit holding ``configs`` (in the given order), all of one family."""
    if not configs:
        raise ValueError("a translation unit needs at least one config")
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise ValueError("duplicate configs in one translation unit")
    families = {c.family for c in configs}
    if len(families) != 1:
        raise ValueError(f"one family per translation unit, got {sorted(families)}")
    return family_of(configs[0]).render_tu(configs)
