"""Emit the CUTLASS SM90 family's CUDA C++ (one translation unit per group of configs), C ABI.

Every config ``cfg`` becomes three exported functions (all return an ``l2x`` status, 0 = ok):

    int l2x_gemm_<name>(const void* A, const void* B, void* C, int M, int N, int K,
                        int raster, int swizzle, int decomposition, int splits,
                        void* workspace, size_t workspace_bytes, cudaStream_t stream);
    int l2x_gemm_<name>_workspace(int M, int N, int K, int raster, int swizzle,
                                  int decomposition, int splits, size_t* bytes);
    int l2x_gemm_<name>_can_implement(int M, int N, int K, int raster, int swizzle,
                                      int decomposition, int splits);

A is MxK row-major fp16, C is MxN row-major fp16, B is KxN fp16 row-major (``b_major='n'``) or
column-major (``'k'``); pointers are raw device pointers (``half``), C is written, never read
(beta = 0 through CUTLASS's void-C epilogue, so there is no C load at all). Runtime arguments:
``raster`` 0 heuristic / 1 along M / 2 along N (of the problem the kernel computes: swapped
under swap-AB), ``swizzle`` the scheduler's max swizzle size (1, 2, 4, 8), ``decomposition``
0 heuristic / 1 data-parallel / 2 split-K / 3 stream-K (non-zero only for stream-K kernels;
persistent kernels accept 0 or 1) and ``splits`` (split-K factor; 1 otherwise).

The workspace (``_workspace`` says how many bytes; none is read when it says 0) must be zeroed
when it is allocated and then given to this kernel alone (one per kernel and stream): a kernel may
keep counters there that each call leaves at zero for the next (the wgmma family's
``reduce="global"`` and ``"sliced"``), so no call needs a memset.

The source is cutlass/sm90_gemm.cuh (the launcher every config shares) and
cutlass/sm90_gemm_kernel.cuh (one collective-builder instantiation). The launcher allocates
nothing, queries the multiprocessor count once per device, sets the shared-memory attribute once
per device, and caches the kernel Params (which hold the TMA descriptors) for the last few
argument tuples, so a repeated call re-encodes nothing.

``render_registry`` emits the small TU that lists the compiled kernels of any family (name and
parameters as JSON; tuner/csrc/registry.cu); it is generated after the kernel TUs compile so that
it names only the ones that did. ``group`` splits any families' configs into TUs. Output is a
pure function of its inputs (same configs, same bytes).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cuda_l2_explorer.tuner.abi import ABI_VERSION, API_MACRO, entry_points, family_fields, status_cases
from cuda_l2_explorer.tuner.catalog import KernelConfig
from cuda_l2_explorer.tuner.templates import read_text, render

PREAMBLE = "cutlass/sm90_gemm.cuh"
KERNEL_TEMPLATE = "cutlass/sm90_gemm_kernel.cuh"
# Inserted into a kernel's namespace when its epilogue is "convert" (nothing for "alpha", so the
# kernels that predate the choice render, and cache, exactly as before).
CONVERT_EPILOGUE = "cutlass/sm90_convert_epilogue.cuh"
# Likewise for one buffer of D (epi_buffers = 1): the builder it is handed to in place of CUTLASS's.
ONE_BUFFER_EPILOGUE = "cutlass/sm90_one_buffer_epilogue.cuh"
REGISTRY_TEMPLATE = "tuner/csrc/registry.cu"

ROW = "cutlass::layout::RowMajor"
COL = "cutlass::layout::ColumnMajor"


def layouts(cfg: KernelConfig) -> tuple[str, str, str]:
    """CUTLASS (LayoutA, LayoutB, LayoutD) of the problem the kernel computes.

    Plain: A row-major (K-major); B row-major = N-major (``b_major='n'``) or column-major = K-major;
    D row-major. Swap-AB computes D^T (NxM, column-major in CUTLASS terms = our row-major C) from
    A' = B^T (NxK: column-major when B is row-major) and B' = A^T (KxM column-major = K-major).
    """
    if not cfg.swap_ab:
        return ROW, ROW if cfg.b_major == "n" else COL, ROW
    return COL if cfg.b_major == "n" else ROW, COL, COL


def render_kernel(cfg: KernelConfig) -> str:
    la, lb, ld = layouts(cfg)
    coop = cfg.schedule == "cooperative"
    convert = cfg.epilogue == "convert"
    one_buffer = cfg.epi_buffers == 1
    inserted = [
        read_text(path).rstrip("\n")
        for path, wanted in ((CONVERT_EPILOGUE, convert), (ONE_BUFFER_EPILOGUE, one_buffer))
        if wanted
    ]
    stages = (
        "cutlass::gemm::collective::StageCountAutoCarveout<"
        "static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>"
        if cfg.stages == "auto"
        else f"cutlass::gemm::collective::StageCount<{cfg.stages}>"
    )
    return render(
        KERNEL_TEMPLATE,
        name=cfg.name,
        layout_a=la,
        layout_b=lb,
        layout_d=ld,
        tile_m=cfg.tile_m,
        tile_n=cfg.tile_n,
        tile_k=cfg.tile_k,
        cluster_m=cfg.cluster_m,
        cluster_n=cfg.cluster_n,
        epilogue_tile=(
            "cutlass::epilogue::collective::EpilogueTileAuto"
            if cfg.epi_n == "auto"
            else f"Shape<_{cfg.epi_m()}, _{cfg.epi_n}>"
        ),
        epilogue_schedule=(
            "cutlass::epilogue::TmaWarpSpecializedCooperative"
            if coop
            else "cutlass::epilogue::TmaWarpSpecialized"
        ),
        epilogue_callbacks="".join(inserted),
        epilogue_builder=(
            "OneBufferEpilogueBuilder" if one_buffer else "cutlass::epilogue::collective::CollectiveBuilder"
        ),
        epilogue_fusion=",\n    ConvertAcc" if convert else "",
        kernel_schedule=(
            "cutlass::gemm::KernelTmaWarpSpecializedCooperative"
            if coop
            else "cutlass::gemm::KernelTmaWarpSpecializedPingpong"
        ),
        stages=stages,
        tile_scheduler=(
            "cutlass::gemm::StreamKScheduler"
            if cfg.scheduler == "streamk"
            else "cutlass::gemm::PersistentScheduler"
        ),
        swap="true" if cfg.swap_ab else "false",
        b_col="true" if cfg.b_major == "k" else "false",
        streamk="true" if cfg.scheduler == "streamk" else "false",
    ) + entry_points(cfg.name)


def render_tu(configs: Sequence[KernelConfig]) -> str:
    """One translation unit holding CUTLASS ``configs`` (in the given order)."""
    return render(PREAMBLE, **family_fields()) + "".join(render_kernel(c) for c in configs)


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_registry(configs: Sequence[Any], meta: dict[str, str] | None = None) -> str:
    """The registry TU: ABI version, build metadata and the list of compiled kernels (any family)."""
    rows = sorted(configs, key=lambda c: c.name)
    return render(
        REGISTRY_TEMPLATE,
        api_macro=API_MACRO,
        names="".join(f"  {_c_string(c.name)},\n" for c in rows),
        params="".join(f"  {_c_string(json.dumps(c.to_dict(), sort_keys=True))},\n" for c in rows),
        count=len(rows),
        abi_version=ABI_VERSION,
        build_info=_c_string(json.dumps(meta or {}, sort_keys=True)),
        status_cases=status_cases("    ", 2),
    )


def group(configs: Sequence[Any], per_tu: int) -> list[list[Any]]:
    """Split ``configs`` into translation units of at most ``per_tu``, in a stable order.

    One family per TU, families in a fixed order; within a family sorted by name, so the same
    set of configs always yields the same TUs (and the same cache keys) whatever order it was
    listed in, and adding a family leaves the other families' TUs unchanged.
    """
    if per_tu < 1:
        raise ValueError("per_tu must be >= 1")
    out: list[list[Any]] = []
    for fam in sorted({c.family for c in configs}):
        ordered = sorted({c for c in configs if c.family == fam}, key=lambda c: c.name)
        out += [ordered[i : i + per_tu] for i in range(0, len(ordered), per_tu)]
    return out
