"""Load the tuner's kernel library (built by tuner/build.py) with ctypes and call its kernels.

Only the standard library is imported here. Pointers are ints (``tensor.data_ptr()``), the
stream a cudaStream_t as an int (0 = legacy default stream).

Environment: ``CUDA_L2_EXPLORER_TUNER_LIB`` a library to load instead of the build folder's latest
(``<build folder>/lib/latest.json``; the build folder is ``$CUDA_L2_EXPLORER_TUNER_BUILD``, else
``.tuner-build`` in the working directory).
"""

from __future__ import annotations

import ctypes
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuda_l2_explorer.tuner.abi import ABI_VERSION, L2X_CANNOT_IMPLEMENT, L2X_OK, STATUS_NAMES  # noqa: F401  (re-exported)
from cuda_l2_explorer.tuner.tiny import TINY_FAMILY  # noqa: F401  (re-exported: the harness picks it)

RASTER = {"heuristic": 0, "along_m": 1, "along_n": 2}
DECOMPOSITION = {"heuristic": 0, "data_parallel": 1, "splitk": 2, "streamk": 3}

_ENV_LIB = "CUDA_L2_EXPLORER_TUNER_LIB"
_ENV_BUILD = "CUDA_L2_EXPLORER_TUNER_BUILD"


class TunerError(RuntimeError):
    def __init__(self, func: str, status: int) -> None:
        super().__init__(f"{func}: {STATUS_NAMES.get(status, 'error')} ({status})")
        self.func = func
        self.status = status


@dataclass(frozen=True)
class Variant:
    """The runtime arguments of one call (what the search sweeps without recompiling)."""

    raster: int = 0
    swizzle: int = 1
    decomposition: int = 0
    splits: int = 1

    @property
    def label(self) -> str:
        r = {v: k for k, v in RASTER.items()}[self.raster]
        d = {v: k for k, v in DECOMPOSITION.items()}[self.decomposition]
        return f"r={r},sw={self.swizzle},d={d},s={self.splits}"

    def args(self) -> tuple[int, int, int, int]:
        return (self.raster, self.swizzle, self.decomposition, self.splits)


def default_build_dir() -> Path:
    """Where tuner/build.py writes (and this module looks for) the library: never inside the package."""
    return Path(os.environ.get(_ENV_BUILD) or ".tuner-build")


def default_library() -> Path | None:
    env = os.environ.get(_ENV_LIB)
    if env:
        return Path(env)
    ptr = default_build_dir() / "lib" / "latest.json"
    try:
        lib = ptr.parent / json.loads(ptr.read_text())["library"]
    except (OSError, ValueError, KeyError):
        return None
    return lib if lib.exists() else None


def library_cutlass_version(path: str | os.PathLike) -> str | None:
    """The CUTLASS version a built library was compiled against, from the build's record beside it
    (readable without loading the library, so without a GPU)."""
    try:
        return json.loads(Path(path).with_suffix(".json").read_text()).get("cutlass")
    except (OSError, ValueError, AttributeError):
        return None


class Kernel:
    """One compiled instantiation: ``kernel(a, b, c, M, N, K, variant, workspace, ws_bytes, stream)``."""

    def __init__(self, lib: ctypes.CDLL, name: str, params: dict[str, Any]) -> None:
        self.name = name
        self.params = params
        vp, i, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
        self._run = getattr(lib, f"l2x_gemm_{name}")
        self._run.restype = i
        self._run.argtypes = [vp, vp, vp, i, i, i, i, i, i, i, vp, sz, vp]
        self._ws = getattr(lib, f"l2x_gemm_{name}_workspace")
        self._ws.restype = i
        self._ws.argtypes = [i, i, i, i, i, i, i, ctypes.POINTER(sz)]
        self._can = getattr(lib, f"l2x_gemm_{name}_can_implement")
        self._can.restype = i
        self._can.argtypes = [i, i, i, i, i, i, i]

    @property
    def entry(self) -> Any:
        """The raw ctypes entry point (callers on a hot path bind its arguments once)."""
        return self._run

    def can_implement(self, M: int, N: int, K: int, v: Variant = Variant()) -> bool:
        return self._can(M, N, K, *v.args()) == L2X_OK

    def workspace_bytes(self, M: int, N: int, K: int, v: Variant = Variant()) -> int:
        out = ctypes.c_size_t()
        st = self._ws(M, N, K, *v.args(), ctypes.byref(out))
        if st:
            raise TunerError(f"l2x_gemm_{self.name}_workspace", st)
        return int(out.value)

    def __call__(
        self,
        a: int,
        b: int,
        c: int,
        M: int,
        N: int,
        K: int,
        v: Variant = Variant(),
        workspace: int = 0,
        workspace_bytes: int = 0,
        stream: int = 0,
    ) -> None:
        st = self._run(a, b, c, M, N, K, *v.args(), workspace or None, workspace_bytes, stream or None)
        if st:
            raise TunerError(f"l2x_gemm_{self.name}", st)


class TunerLibrary:
    """The kernels of one built library, by name."""

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        p = Path(path) if path is not None else default_library()
        if p is None:
            raise FileNotFoundError(
                "no tuner library: run `python -m cuda_l2_explorer.tuner.build` or set " + _ENV_LIB
            )
        self.path = p.resolve()
        self._lib = ctypes.CDLL(str(self.path))
        lib = self._lib
        lib.l2x_abi_version.restype = ctypes.c_int
        lib.l2x_kernel_count.restype = ctypes.c_int
        lib.l2x_kernel_name.restype = ctypes.c_char_p
        lib.l2x_kernel_name.argtypes = [ctypes.c_int]
        lib.l2x_kernel_params.restype = ctypes.c_char_p
        lib.l2x_kernel_params.argtypes = [ctypes.c_int]
        lib.l2x_build_info.restype = ctypes.c_char_p
        abi = lib.l2x_abi_version()
        if abi != ABI_VERSION:
            raise RuntimeError(f"{self.path} has ABI {abi}, expected {ABI_VERSION}: rebuild it")
        self.build_info: dict[str, Any] = json.loads(lib.l2x_build_info().decode())
        self.kernels: dict[str, Kernel] = {}
        for i in range(lib.l2x_kernel_count()):
            name = lib.l2x_kernel_name(i).decode()
            params = json.loads(lib.l2x_kernel_params(i).decode())
            self.kernels[name] = Kernel(lib, name, params)

    def names(self) -> list[str]:
        return list(self.kernels)

    def __getitem__(self, name: str) -> Kernel:
        return self.kernels[name]

    def __len__(self) -> int:
        return len(self.kernels)
