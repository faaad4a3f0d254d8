"""The native cuBLAS / cuBLASLt baselines of SPEC §6: build, load and call ``csrc/hgemm_baselines.cu``.

The library is a plain shared object with a C ABI (no torch headers), compiled with nvcc into a
cache directory keyed by a content hash of (source, flags, arch, nvcc version, cuBLAS headers),
then loaded with :mod:`ctypes`. :class:`CublasBaselines` wraps it over raw device pointers (ints)
and a CUDA stream handle (int), so the harness can pass ``tensor.data_ptr()`` and
``torch.cuda.current_stream().cuda_stream``.

Only the standard library is imported here; torch is imported lazily by the helpers that take
tensors. See the header comment of the ``.cu`` file for the exact semantics (SPEC sections 4, 6).

Environment:
    CUDA_L2_EXPLORER_BASELINES_LIB   a prebuilt library to load instead of building
    CUDA_L2_EXPLORER_NATIVE_CACHE    the build cache directory
    and the toolchain's (``toolchain``: NVCC, CUDA_HOME, CUBLAS_ROOT)
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from cuda_l2_explorer.importer.harness.toolchain import (
    NativeBuildError,
    cache_dir,
    cublas_roots,
    find_cublas_dev,
    find_nvcc,
    nvcc_version,
)

# The C ABI's source, shipped as package data beside this module.
SOURCE = Path(str(files("cuda_l2_explorer.importer.harness") / "csrc" / "hgemm_baselines.cu"))
ABI_VERSION = 2
LIB_STEM = "libhgemm_baselines"

DEFAULT_WORKSPACE_BYTES = 32 << 20  # SPEC section 6: 32 MiB on Hopper, the same for every baseline
MAX_ALGOS = 100

DEFAULT_GENCODE: tuple[str, ...] = (
    "-gencode=arch=compute_90a,code=sm_90a",
    "-gencode=arch=compute_80,code=compute_80",  # PTX fallback so the library loads elsewhere
)
BASE_FLAGS: tuple[str, ...] = (
    "-O3",
    "-std=c++17",
    "-Xcompiler",
    "-fPIC",
    "-Xcompiler",
    "-fvisibility=hidden",
    "-shared",
    "-cudart",
    "static",
)
# Keep the static cudart's symbols out of the library's dynamic symbol table.
LINK_FLAGS: tuple[str, ...] = ("-Xlinker", "--exclude-libs,ALL")

# Status codes of the C ABI.
HB_OK = 0
STATUS_NAMES = {
    1: "CUDA error",
    2: "cuBLAS error",
    3: "invalid argument",
    4: "no algorithm",
    5: "out of memory",
}
LAYOUTS = {"nn": 0, "tn": 1}
HB_COMPUTE_16F = 1

_ENV_LIB = "CUDA_L2_EXPLORER_BASELINES_LIB"
_ENV_CACHE = "CUDA_L2_EXPLORER_NATIVE_CACHE"


class NativeError(RuntimeError):
    """A call into the native library returned a non-zero status."""

    def __init__(self, func: str, status: int, detail: str) -> None:
        super().__init__(f"{func}: {STATUS_NAMES.get(status, 'error')} ({status}): {detail}")
        self.func = func
        self.status = status
        self.detail = detail


# ----------------------------------------------------------------------------------------------
# Build
# ----------------------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    return cache_dir("native", _ENV_CACHE)


def build_key(
    *,
    flags: Iterable[str] = BASE_FLAGS,
    gencode: Iterable[str] = DEFAULT_GENCODE,
    extra_flags: Iterable[str] = (),
    nvcc_ver: str,
    cublas_ver: str,
    source: Path = SOURCE,
) -> str:
    """Hex content hash naming one build: source, flags, arch, nvcc version, cuBLAS headers."""
    payload = {
        "source_sha256": hashlib.sha256(Path(source).read_bytes()).hexdigest(),
        "flags": list(flags),
        "gencode": list(gencode),
        "extra_flags": list(extra_flags),
        "link_flags": list(LINK_FLAGS),
        "nvcc": nvcc_ver,
        "cublas_headers": cublas_ver,
        "abi": ABI_VERSION,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:20]


def _run_nvcc(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def build_baselines(
    cache_dir: str | os.PathLike | None = None,
    *,
    extra_flags: Sequence[str] = (),
    gencode: Sequence[str] = DEFAULT_GENCODE,
    nvcc: str | None = None,
    force: bool = False,
) -> Path:
    """Build the baselines library (or find it in the cache) and return its path.

    The file is ``<cache_dir>/libhgemm_baselines-<key>.so`` with a ``.json`` beside it recording
    the command and the key's inputs. Raises :class:`NativeBuildError` with nvcc's output when
    nvcc or cuBLAS's headers are missing or the compilation fails.
    """
    nvcc = nvcc or find_nvcc()
    if not nvcc:
        raise NativeBuildError("nvcc not found (set NVCC or CUDA_HOME, or put nvcc on the PATH)")
    dev = find_cublas_dev(nvcc)
    if dev is None:
        raise NativeBuildError(
            "cuBLAS headers/libraries not found (looked in $CUBLAS_ROOT, the nvidia-* wheels on "
            "sys.path, $CUDA_HOME and nvcc's toolkit); `pip install nvidia-cublas` provides them"
        )
    nv_ver = nvcc_version(nvcc)
    key = build_key(extra_flags=extra_flags, gencode=gencode, nvcc_ver=nv_ver, cublas_ver=dev.version)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    out = cache / f"{LIB_STEM}-{key}.so"
    if out.exists() and not force:
        return out
    cache.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{LIB_STEM}-{key}.", suffix=".so", dir=cache)
    os.close(fd)
    cmd = [
        nvcc,
        *BASE_FLAGS,
        *gencode,
        *extra_flags,
        f"-I{dev.include_dir}",
        str(SOURCE),
        "-o",
        tmp,
        f"-L{dev.lib_dir}",
        f"-l:{dev.cublas}",
        f"-l:{dev.cublaslt}",
        *LINK_FLAGS,
    ]
    try:
        try:
            res = _run_nvcc(cmd)
        except (OSError, subprocess.SubprocessError) as exc:
            raise NativeBuildError(f"could not run nvcc: {exc}", cmd) from exc
        if res.returncode != 0:
            raise NativeBuildError(
                f"nvcc failed with exit code {res.returncode} building {SOURCE.name}",
                cmd,
                (res.stdout + res.stderr).strip(),
            )
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    meta = {
        "key": key,
        "source": str(SOURCE),
        "command": [str(out) if a == tmp else a for a in cmd],
        "nvcc": nv_ver,
        "cublas_headers": dev.version,
        "abi": ABI_VERSION,
    }
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1))
    return out


# ----------------------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------------------


def _mapped_libs(prefix: str) -> list[str]:
    """Paths of already loaded shared objects whose file name starts with ``prefix``."""
    try:
        with open("/proc/self/maps") as fh:
            paths = {line.split()[-1] for line in fh if "/" in line}
    except OSError:
        return []
    return sorted(p for p in paths if os.path.basename(p).startswith(prefix))


def elf_needed(path: str | os.PathLike) -> list[str]:
    """DT_NEEDED entries of a 64-bit little-endian ELF shared object ([] if it cannot be read)."""
    import struct

    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + k * shentsize) for k in range(shnum)]
    out: list[str] = []
    for _name, typ, _fl, _addr, off, size, link, _info, _al, entsize in sections:
        if typ != 6:  # SHT_DYNAMIC
            continue
        stroff = sections[link][4]
        for pos in range(off, off + size, entsize or 16):
            tag, val = struct.unpack_from("<qQ", data, pos)
            if tag == 0:
                break
            if tag == 1:  # DT_NEEDED
                end = data.index(b"\0", stroff + val)
                out.append(data[stroff + val : end].decode())
    return out


def _needed_sonames(lib: Path) -> list[str]:
    """The cuBLAS sonames our library links against, cuBLASLt first."""
    needed = [n for n in elf_needed(lib) if n.startswith("libcublas")]
    return sorted(needed, key=lambda n: not n.startswith("libcublasLt")) or [
        "libcublasLt.so.13",
        "libcublas.so.13",
    ]


_PRELOADED: dict[str, str] = {}


def preload_cublas(sonames: Sequence[str] = ("libcublasLt.so.13", "libcublas.so.13")) -> dict[str, str]:
    """Make cuBLAS(Lt) loadable for our library: returns {soname: path loaded}.

    Order: a copy already loaded in this process (e.g. by torch); the nvidia-* wheels on sys.path
    (the ones torch uses, so torch and the baselines share one cuBLAS); $CUBLAS_ROOT, $CUDA_HOME
    and nvcc's toolkit; finally the dynamic linker's own search (LD_LIBRARY_PATH, ld.so.cache).
    Each is loaded with RTLD_GLOBAL so that our library's DT_NEEDED entries resolve to it.
    """
    found: dict[str, str] = {}
    for soname in sonames:
        if soname in _PRELOADED:
            found[soname] = _PRELOADED[soname]
            continue
        already = _mapped_libs(soname)  # e.g. torch's copy, possibly libcublas.so.13.x.y
        cands = already + [
            str(d / sub / soname)
            for d in cublas_roots(find_nvcc())
            for sub in ("lib", "lib64")
            if (d / sub / soname).exists()
        ]
        errors = []
        for path in [*cands, soname]:
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError as exc:
                errors.append(f"{path}: {exc}")
                continue
            found[soname] = path
            _PRELOADED[soname] = path
            break
        else:
            raise NativeError("preload_cublas", 1, f"cannot load {soname}; tried: " + "; ".join(errors))
    return found


_LIBS: dict[str, ctypes.CDLL] = {}


def _declare(lib: ctypes.CDLL) -> None:
    vp, i, ll = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_longlong)
    sigs = {
        "hb_abi_version": (i, []),
        "hb_last_error": (ctypes.c_char_p, []),
        "hb_versions": (i, [ll]),
        "hb_create": (i, [ctypes.c_size_t, i, ctypes.POINTER(vp)]),
        "hb_destroy": (i, [vp]),
        "hb_context_info": (i, [vp, ll]),
        "hb_cublas_gemm": (i, [vp, i, i, i, i, vp, vp, vp, vp]),
        "hb_lt_prepare": (i, [vp, i, i, i, i, i, ctypes.POINTER(vp), ctypes.POINTER(i)]),
        "hb_lt_algo_info": (i, [vp, i, ll]),
        "hb_lt_matmul": (i, [vp, vp, i, vp, vp, vp, vp]),
        "hb_gate": (i, [vp, i, ctypes.c_longlong, vp]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


def load_baselines(
    path: str | os.PathLike | None = None, cache_dir: str | os.PathLike | None = None
) -> ctypes.CDLL:
    """Load the library: ``path``, else $CUDA_L2_EXPLORER_BASELINES_LIB, else :func:`build_baselines`."""
    if path is None:
        path = os.environ.get(_ENV_LIB) or build_baselines(cache_dir)
    p = Path(path).resolve()
    key = str(p)
    if key in _LIBS:
        return _LIBS[key]
    preload_cublas(_needed_sonames(p))
    lib = ctypes.CDLL(key)
    _declare(lib)
    abi = lib.hb_abi_version()
    if abi != ABI_VERSION:
        raise NativeError("load_baselines", 3, f"{p} has ABI {abi}, expected {ABI_VERSION}: rebuild it")
    _LIBS[key] = lib
    return lib


def _check(lib: ctypes.CDLL, func: str, status: int) -> None:
    if status != HB_OK:
        raise NativeError(func, status, (lib.hb_last_error() or b"").decode(errors="replace"))


def _fmt_version(v: int) -> str:
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


def _fmt_cuda(v: int) -> str:
    return f"{v // 1000}.{v % 1000 // 10}"


def versions(lib: ctypes.CDLL | None = None) -> dict[str, Any]:
    """Provenance: cuBLAS / cuBLASLt versions loaded at run time, CUDA runtime and driver."""
    lib = lib or load_baselines()
    arr = (ctypes.c_longlong * 8)()
    _check(lib, "hb_versions", lib.hb_versions(arr))
    mapped = set(_mapped_libs("libcublas")) | set(_PRELOADED.values())
    return {
        "cublas": _fmt_version(arr[0]),
        "cublaslt": _fmt_version(arr[1]),
        "cublaslt_cudart": _fmt_cuda(arr[2]),
        "cudart": _fmt_cuda(arr[3]),
        "driver": _fmt_cuda(arr[4]),
        "cublas_headers": _fmt_version(arr[5]),
        "nvcc": _fmt_cuda(arr[6]),
        "abi": int(arr[7]),
        "cublas_paths": sorted(mapped),
    }


# ----------------------------------------------------------------------------------------------
# Wrapper
# ----------------------------------------------------------------------------------------------


def _layout(layout: str | int) -> int:
    if isinstance(layout, str):
        try:
            return LAYOUTS[layout]
        except KeyError:
            raise ValueError(f"layout must be 'nn' or 'tn', got {layout!r}") from None
    if layout not in (0, 1):
        raise ValueError(f"layout must be 0 (nn) or 1 (tn), got {layout!r}")
    return int(layout)


@dataclass(frozen=True)
class LtPlan:
    """A cached cuBLASLt problem (descriptors + heuristic candidates) inside a context."""

    handle: int
    M: int
    N: int
    K: int
    layout: str
    n_algos: int


class CublasBaselines:
    """cuBLAS / cuBLASLt HGEMM baselines over raw device pointers.

    Pointers are ints (``tensor.data_ptr()``); ``stream`` is a cudaStream_t as an int
    (``torch.cuda.current_stream().cuda_stream``; 0 = legacy default stream). ``b`` is the
    row-major KxN B for layout ``nn`` and the column-major B (``b_col_major``) for ``tn``.
    The context is bound to the CUDA device current at construction and is not thread-safe.
    """

    def __init__(
        self,
        workspace_bytes: int = DEFAULT_WORKSPACE_BYTES,
        compute16: bool = False,
        lib: ctypes.CDLL | str | os.PathLike | None = None,
    ) -> None:
        self._lib = lib if isinstance(lib, ctypes.CDLL) else load_baselines(lib)
        self._ctx = ctypes.c_void_p()
        flags = HB_COMPUTE_16F if compute16 else 0
        _check(
            self._lib, "hb_create", self._lib.hb_create(int(workspace_bytes), flags, ctypes.byref(self._ctx))
        )
        info = (ctypes.c_longlong * 4)()
        _check(self._lib, "hb_context_info", self._lib.hb_context_info(self._ctx, info))
        self.workspace_bytes = int(info[0])
        self.compute = "16F" if info[1] == 16 else "32F"
        self.device = int(info[2])
        self._gemm = self._lib.hb_cublas_gemm
        self._lt = self._lib.hb_lt_matmul

    # -- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        ctx, self._ctx = getattr(self, "_ctx", None), None
        if ctx:
            _check(self._lib, "hb_destroy", self._lib.hb_destroy(ctx))

    def __enter__(self) -> CublasBaselines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _alive(self) -> ctypes.c_void_p:
        if not self._ctx:
            raise RuntimeError("CublasBaselines context is closed")
        return self._ctx

    # -- queries -------------------------------------------------------------------------------
    def versions(self) -> dict[str, Any]:
        return versions(self._lib)

    def info(self) -> dict[str, Any]:
        arr = (ctypes.c_longlong * 4)()
        _check(self._lib, "hb_context_info", self._lib.hb_context_info(self._alive(), arr))
        return {"workspace_bytes": arr[0], "compute": f"{arr[1]}F", "device": arr[2], "lt_plans": arr[3]}

    # -- cuBLAS ----------------------------------------------------------------------------------
    def cublas(
        self, layout: str | int, M: int, N: int, K: int, a: int, b: int, c: int, stream: int = 0
    ) -> None:
        """``cublasGemmEx`` with the default tensor-op algorithm: C = A @ B (row-major C)."""
        st = self._gemm(self._alive(), _layout(layout), M, N, K, a, b, c, stream)
        if st:
            _check(self._lib, "hb_cublas_gemm", st)

    def gate(self, counter: int, value: int, timeout_ns: int, stream: int = 0) -> None:
        """Hold ``stream`` until the pinned ``counter[0] >= value`` or ``timeout_ns`` (hb_gate)."""
        _check(self._lib, "hb_gate", self._lib.hb_gate(counter, value, timeout_ns, stream))

    # -- cuBLASLt --------------------------------------------------------------------------------
    def lt_prepare(self, layout: str | int, M: int, N: int, K: int, max_algos: int = 1) -> LtPlan:
        """Descriptors and up to ``max_algos`` heuristic candidates, cached in the context."""
        lay = _layout(layout)
        handle, n = ctypes.c_void_p(), ctypes.c_int()
        _check(
            self._lib,
            "hb_lt_prepare",
            self._lib.hb_lt_prepare(
                self._alive(), lay, M, N, K, int(max_algos), ctypes.byref(handle), ctypes.byref(n)
            ),
        )
        return LtPlan(int(handle.value), M, N, K, "nn" if lay == 0 else "tn", int(n.value))

    def lt_algo_info(self, plan: LtPlan, i: int) -> dict[str, int | float]:
        arr = (ctypes.c_longlong * 8)()
        _check(self._lib, "hb_lt_algo_info", self._lib.hb_lt_algo_info(plan.handle, i, arr))
        return {
            "algo_id": arr[0],
            "tile": arr[1],
            "stages": arr[2],
            "splitk": arr[3],
            "reduction": arr[4],
            "swizzle": arr[5],
            "workspace_bytes": arr[6],
            "waves": arr[7] / 1000.0,
        }

    def lt(self, plan: LtPlan, i: int, a: int, b: int, c: int, stream: int = 0) -> None:
        """``cublasLtMatmul`` with candidate ``i`` of ``plan`` (0 = heuristic top-1)."""
        st = self._lt(self._alive(), plan.handle, i, a, b, c, stream)
        if st:
            _check(self._lib, "hb_lt_matmul", st)

    # -- tensor helpers (torch imported lazily) --------------------------------------------------
    @staticmethod
    def tensor_args(layout: str, a: Any, b: Any, c: Any) -> tuple[int, int, int, int, int, int]:
        """(M, N, K, a_ptr, b_ptr, c_ptr) from torch tensors, checking dtype and memory layout.

        For ``tn``, ``b`` is the column-major B: either the KxN view with strides (1, K)
        (SPEC's ``b_col_major``) or the NxK contiguous ``b.t().contiguous()``.
        """
        import torch

        for name, t in (("a", a), ("b", b), ("c", c)):
            if t.dtype != torch.float16 or not t.is_cuda or t.dim() != 2:
                raise ValueError(f"{name} must be a 2-D float16 CUDA tensor")
        M, K = a.shape
        if not a.is_contiguous() or not c.is_contiguous():
            raise ValueError("a and c must be row-major contiguous")
        if _layout(layout) == 0:
            if not b.is_contiguous() or b.shape[0] != K:
                raise ValueError("nn: b must be a contiguous KxN tensor")
            N = b.shape[1]
        elif b.shape[0] == K and b.stride() == (1, K):
            N = b.shape[1]
        elif b.shape[1] == K and b.is_contiguous():
            N = b.shape[0]
        else:
            raise ValueError("tn: b must be column-major KxN (strides (1, K)) or NxK contiguous")
        if tuple(c.shape) != (M, N):
            raise ValueError(f"c must be {M}x{N}")
        return int(M), int(N), int(K), a.data_ptr(), b.data_ptr(), c.data_ptr()


def current_stream() -> int:
    """The current torch CUDA stream as an int handle."""
    import torch

    return int(torch.cuda.current_stream().cuda_stream)
