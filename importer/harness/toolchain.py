"""The CUDA toolchain the harness builds with: nvcc, cuBLAS headers and libraries, cache folders.

Only the standard library is imported here.

Environment:
    NVCC / CUDA_HOME    which nvcc to use
    CUBLAS_ROOT         where cuBLAS headers (include/) and libraries (lib/) are
    XDG_CACHE_HOME      where build caches live (``<it>/cuda-l2-explorer/<kind>``), unless a
                        cache's own variable names a folder
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


class NativeBuildError(RuntimeError):
    """nvcc failed (or could not be found); ``output`` holds nvcc's message, ``cmd`` the command."""

    def __init__(self, message: str, cmd: Sequence[str] | None = None, output: str = "") -> None:
        super().__init__(message if not output else f"{message}\n{output}")
        self.cmd = list(cmd) if cmd else None
        self.output = output


# ----------------------------------------------------------------------------------------------
# Toolchain discovery
# ----------------------------------------------------------------------------------------------


def find_nvcc() -> str | None:
    """nvcc from $NVCC, $CUDA_HOME/bin, the PATH, then /usr/local/cuda/bin."""
    env = os.environ.get("NVCC")
    if env:
        return env
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and os.access(os.path.join(home, "bin", "nvcc"), os.X_OK):
        return os.path.join(home, "bin", "nvcc")
    found = shutil.which("nvcc")
    if found:
        return found
    if os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
        return "/usr/local/cuda/bin/nvcc"
    return None


_NVCC_VERSION_CACHE: dict[str, str] = {}


def nvcc_version(nvcc: str) -> str:
    """The 'release X.Y, VX.Y.Z' part of ``nvcc --version`` (the full text if not found)."""
    if nvcc not in _NVCC_VERSION_CACHE:
        try:
            out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            raise NativeBuildError(f"cannot run {nvcc} --version: {exc}") from exc
        text = out.stdout + out.stderr
        m = re.search(r"release [^\n]*", text)
        _NVCC_VERSION_CACHE[nvcc] = m.group(0).strip() if m else text.strip()
    return _NVCC_VERSION_CACHE[nvcc]


def _toolkit_root(nvcc: str | None) -> Path | None:
    if not nvcc:
        return None
    real = Path(os.path.realpath(shutil.which(nvcc) or nvcc))
    return real.parent.parent


def _nvidia_wheel_dirs() -> list[Path]:
    """``nvidia/cu13``-style and ``nvidia/cublas`` folders of the nvidia-* wheels on sys.path."""
    out: list[Path] = []
    for entry in sys.path:
        base = Path(entry or ".") / "nvidia"
        if not base.is_dir():
            continue
        for sub in [*sorted(base.glob("cu[0-9]*"), reverse=True), base / "cublas"]:
            if sub.is_dir() and sub not in out:
                out.append(sub)
    return out


def cublas_roots(nvcc: str | None) -> list[Path]:
    roots: list[Path] = []
    env = os.environ.get("CUBLAS_ROOT")
    if env:
        roots.append(Path(env))
    roots += _nvidia_wheel_dirs()
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        roots.append(Path(home))
    tk = _toolkit_root(nvcc)
    if tk:
        roots.append(tk)
        roots += sorted((tk / "targets").glob("*"))
    roots.append(Path("/usr/local/cuda"))
    roots.append(Path("/usr"))
    seen: list[Path] = []
    for r in roots:
        if r not in seen:
            seen.append(r)
    return seen


def _find_lib(libdir: Path, name: str) -> str | None:
    """The file name to link ``name`` (e.g. 'libcublas') from: unversioned first, else highest .so.N."""
    if (libdir / f"{name}.so").exists():
        return f"{name}.so"
    cands = [Path(p).name for p in glob.glob(str(libdir / f"{name}.so.*"))]
    cands = [c for c in cands if re.fullmatch(re.escape(name) + r"\.so\.\d+", c)]
    if not cands:
        return None
    return max(cands, key=lambda c: int(c.rsplit(".", 1)[1]))


@dataclass(frozen=True)
class CublasDev:
    include_dir: Path
    lib_dir: Path
    cublas: str  # file name to link, e.g. libcublas.so.13
    cublaslt: str
    version: str  # of the headers, e.g. 13.0.2


def find_cublas_dev(nvcc: str | None = None) -> CublasDev | None:
    """cuBLAS headers and libraries to build against, or None when not found."""
    for root in cublas_roots(nvcc if nvcc is not None else find_nvcc()):
        inc = root / "include"
        if not ((inc / "cublas_v2.h").exists() and (inc / "cublasLt.h").exists()):
            continue
        for libdir in (root / "lib64", root / "lib", root / "lib" / "x86_64-linux-gnu"):
            blas, lt = _find_lib(libdir, "libcublas"), _find_lib(libdir, "libcublasLt")
            if blas and lt:
                return CublasDev(inc, libdir, blas, lt, _header_version(inc))
    return None


def _header_version(inc: Path) -> str:
    try:
        text = (inc / "cublas_api.h").read_text(errors="replace")
    except OSError:
        return "unknown"
    parts = [
        re.search(rf"#define\s+CUBLAS_VER_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "PATCH", "BUILD")
    ]
    return ".".join(m.group(1) for m in parts if m) or "unknown"


def cache_dir(kind: str, env_var: str) -> Path:
    """``$<env_var>`` if set, else ``$XDG_CACHE_HOME/cuda-l2-explorer/<kind>`` (~/.cache by default)."""
    env = os.environ.get(env_var)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cuda-l2-explorer" / kind
