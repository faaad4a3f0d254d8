"""Build SPEC section 4 kernel files into importable torch extension modules, in parallel, cached.

Each ``M_N_K.cu`` file is compiled by nvcc directly (not torch's JIT ``load``, so that the flags
and the cache are ours) together with a generated wrapper translation unit that ``#include``s the
file by absolute path and binds its entry point as ``run(a, b, b_col_major, c)`` with pybind11
(the GIL is released during the call). The flags are SPEC section 4's, plus what a torch
extension needs (see :func:`compile_command`); ``-DNDEBUG`` only when asked (our own builds).

Cache: ``<cache>/<key>/<module>.so`` with ``build.json`` (command, seconds, compiler log, the
key's inputs) and the wrapper beside it. The key is a sha256 over the file's bytes, the wrapper
template, the entry point, the flags, the arch, ``nvcc --version``, the torch version and C++
ABI, the Python ABI and the CUTLASS version, so files with identical text share one build. The
folders where torch, Python, CUTLASS and cuBLAS lie are not in it, only their versions: a cache
built on another machine with the same versions serves this one. A build compiles in a
temporary folder (nvcc's own temporaries too) and gives back the module's bytes; the entry is
then written in a temporary folder inside the cache and renamed into place whole: a failed,
timed-out or killed build leaves no entry. Failures are not cached; a file that does not compile
is simply rebuilt next time.

Where it compiles: ``jobs`` nvcc processes here, or (``cluster``, a Dask scheduler's address) the
cluster's workers, each with this config's arch and flags and its own nvcc and CUTLASS headers of
the versions the key names (importer/cluster.py). The cache stays here: only the builds it lacks
are sent out, and only this process writes it.

Only the standard library is imported at module level; torch is imported by the functions that
need it (:func:`torch_build_info`, :func:`arch_for_current_gpu`, :func:`load_module`).

Environment:
    CUDA_L2_EXPLORER_BUILD_CACHE   the cache folder (default ~/.cache/cuda-l2-explorer/kernels)
    CUTLASS_DIR                    a CUTLASS checkout (include/ and tools/util/include/) to use
    NVCC / CUDA_HOME               which nvcc to use (see toolchain)
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import closing
from dataclasses import asdict, dataclass, field, replace
from importlib.resources import files
from pathlib import Path
from typing import Any

from cuda_l2_explorer.db.errors import NoGPUError, UsageError
from cuda_l2_explorer.importer.cluster import client_for, map_unordered, worker_name
from cuda_l2_explorer.importer.harness import build_units, toolchain
from cuda_l2_explorer.importer.kernelset import KernelFile

BUILD_FORMAT = 2  # bump when the cache layout, the wrapper's contract or the key changes

# SPEC section 4, verbatim.
SPEC_FLAGS: tuple[str, ...] = (
    "-O3",
    "-std=c++17",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_HALF2_OPERATORS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "--expt-relaxed-constexpr",
    "--expt-extended-lambda",
    "--use_fast_math",
)
# A shared object that Python can import. The CUDA runtime is linked dynamically (nvcc's default
# is static): the module then shares torch's libcudart, as a torch extension does.
SHARED_FLAGS: tuple[str, ...] = ("-Xcompiler", "-fPIC", "-shared", "-cudart", "shared")
TORCH_LIBS: tuple[str, ...] = ("c10", "torch", "torch_cpu", "torch_python", "c10_cuda", "torch_cuda")
DEFAULT_CUDA_LINK: tuple[str, ...] = ("-lcudart", "-lcublas")

DEFAULT_TIMEOUT_S = 600.0
MAX_LOG_CHARS = 16_000
STALE_TMP_SECONDS = 2 * 3600  # temporary build folders older than this are left-overs of a kill

_ENV_CACHE = "CUDA_L2_EXPLORER_BUILD_CACHE"
_MODULE_PLACEHOLDER = "@MODULE@"

# The wrapper translation unit (csrc/kernel_wrapper.cpp.in). @SOURCE@ is the kernel file's
# absolute path, @FUNCTION@ its entry point, @MODULE@ the module name. The file comes first, as if
# it were compiled on its own.
WRAPPER_TEMPLATE = (files("cuda_l2_explorer.importer.harness") / "csrc" / "kernel_wrapper.cpp.in").read_text()
# Its Python binding alone: what a unit of several files (build_units) repeats for each file.
BINDING_TEMPLATE = WRAPPER_TEMPLATE[WRAPPER_TEMPLATE.index("PYBIND11_MODULE") :]

# Device labels of the reference layout (and a few more) to the arch a kernel is compiled for.
DEVICE_ARCH: dict[str, str] = {
    "h100": "sm_90a",
    "h200": "sm_90a",
    "h800": "sm_90a",
    "h20": "sm_90a",
    "gh200": "sm_90a",
    "a100": "sm_80",
    "a800": "sm_80",
    "a30": "sm_80",
    "3090": "sm_86",
    "3080": "sm_86",
    "a10": "sm_86",
    "a40": "sm_86",
    "a6000": "sm_86",
    "4090": "sm_89",
    "l4": "sm_89",
    "l40": "sm_89",
    "l40s": "sm_89",
}
_ARCH_RE = re.compile(r"^(?:sm_)?([0-9]{2,3}[af]?)$")


# ----------------------------------------------------------------------------------------------
# Toolchain description
# ----------------------------------------------------------------------------------------------


class ToolchainError(NoGPUError):
    """What a kernel build needs is missing (torch with its headers, nvcc)."""


@dataclass(frozen=True)
class TorchBuildInfo:
    """Where torch's headers and libraries are; :func:`torch_build_info` reads them from torch.

    Tests (and machines that only compile) may construct one by hand.
    """

    version: str
    include_dirs: tuple[str, ...]
    library_dirs: tuple[str, ...]
    cxx11_abi: int | None  # torch._C._GLIBCXX_USE_CXX11_ABI; None: leave the compiler's default
    python_include: str
    python_tag: str  # the interpreter's SOABI: an extension module only loads in a matching one
    libraries: tuple[str, ...] = TORCH_LIBS


def _python_tag() -> str:
    return str(sysconfig.get_config_var("SOABI") or sys.implementation.cache_tag)


def torch_build_info() -> TorchBuildInfo:
    """Torch's include and library paths, version and C++ ABI (imports torch)."""
    try:
        import torch
        import torch.utils.cpp_extension as cpp_ext
    except ImportError as exc:
        raise ToolchainError(
            f"building kernels needs torch (pip install 'cuda-l2-explorer[gpu]'): {exc}"
        ) from exc

    def call(fn: Callable[..., list[str]]) -> list[str]:
        for kwargs in ({"device_type": "cuda"}, {"cuda": True}, {}):
            try:
                return list(fn(**kwargs))
            except TypeError:
                continue  # another torch version's signature
            except (OSError, RuntimeError):
                break  # CUDA_HOME not found: torch's own dirs are enough, nvcc adds CUDA's
        return list(fn())

    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    try:
        lib_dirs = list(cpp_ext.library_paths())
    except Exception:
        lib_dirs = [torch_lib]
    abi = getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", None)
    return TorchBuildInfo(
        version=f"{torch.__version__} (CUDA {torch.version.cuda})",
        include_dirs=tuple(call(cpp_ext.include_paths)),
        library_dirs=tuple(lib_dirs),
        cxx11_abi=None if abi is None else int(bool(abi)),
        python_include=sysconfig.get_paths()["include"],
        python_tag=_python_tag(),
    )


@dataclass(frozen=True)
class CutlassInfo:
    root: str
    include_dirs: tuple[str, ...]
    version: str


def _cutlass_version(include: Path) -> str:
    try:
        text = (include / "cutlass" / "version.h").read_text(errors="replace")
    except OSError:
        return "unknown"
    parts = [re.search(rf"#define\s+CUTLASS_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts if m) or "unknown"


def cutlass_at(root: str | os.PathLike[str]) -> CutlassInfo | None:
    """CUTLASS headers under ``root`` (``include/cutlass/cutlass.h``), or None."""
    base = Path(root).resolve()
    include = base / "include"
    if not (include / "cutlass" / "cutlass.h").is_file():
        return None
    dirs = [str(include)]
    util = base / "tools" / "util" / "include"
    if util.is_dir():
        dirs.append(str(util))
    return CutlassInfo(root=str(base), include_dirs=tuple(dirs), version=_cutlass_version(include))


def _shipped_cutlass() -> CutlassInfo | None:
    """CUTLASS headers in the package's own cutlass/ data folder, when it holds a full copy."""
    try:
        folder = files("cuda_l2_explorer.cutlass")
    except ModuleNotFoundError:
        folder = files("cuda_l2_explorer") / "cutlass"
    return cutlass_at(str(folder)) if folder.is_dir() else None


def find_cutlass() -> CutlassInfo | None:
    """CUTLASS from $CUTLASS_DIR, the package's cutlass/ folder, or the nvidia-cutlass wheel."""
    env = os.environ.get("CUTLASS_DIR")
    if env:
        found = cutlass_at(env)
        if found is None:
            raise UsageError(f"CUTLASS_DIR={env} has no include/cutlass/cutlass.h")
        return found
    project = _shipped_cutlass()
    if project is not None:
        return project
    try:
        spec = importlib.util.find_spec("cutlass_library")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        return cutlass_at(Path(spec.origin).parent / "source")
    return None


def arch_for_capability(major: int, minor: int) -> str:
    """sm_XY for a compute capability; the arch-specific 'a' target from Hopper on (wgmma...)."""
    return f"sm_{major}{minor}" + ("a" if major >= 9 else "")


def arch_for_current_gpu() -> str:
    try:
        import torch
    except ImportError as exc:
        raise ToolchainError("arch 'auto' needs torch to read the GPU's compute capability") from exc
    if not torch.cuda.is_available():
        raise NoGPUError("arch 'auto' needs a CUDA GPU; name the device (e.g. h100) or the arch (sm_90a)")
    return arch_for_capability(*torch.cuda.get_device_capability())


def arch_for(device: str) -> str:
    """The nvcc arch for a device label ('h100' -> 'sm_90a'), an arch ('sm_80', '90a'), or 'auto'."""
    label = device.strip().lower()
    if label == "auto":
        return arch_for_current_gpu()
    if label in DEVICE_ARCH:
        return DEVICE_ARCH[label]
    m = _ARCH_RE.match(label)
    if m:
        return f"sm_{m.group(1)}"
    known = ", ".join(sorted(DEVICE_ARCH))
    raise UsageError(f"unknown device {device!r}: use one of {known}, an arch such as sm_90a, or auto")


def gencode(arch: str) -> str:
    """``-gencode=arch=compute_90a,code=sm_90a`` for 'sm_90a'."""
    m = _ARCH_RE.match(arch)
    if not m:
        raise UsageError(f"not an nvcc arch: {arch!r}")
    return f"-gencode=arch=compute_{m.group(1)},code=sm_{m.group(1)}"


@dataclass(frozen=True)
class BuildConfig:
    """Everything a build depends on besides the kernel file itself."""

    arch: str
    nvcc: str
    nvcc_version: str
    torch: TorchBuildInfo
    cutlass: CutlassInfo | None = None
    ndebug: bool = False
    cuda_link: tuple[str, ...] = DEFAULT_CUDA_LINK  # linker arguments for cudart and cuBLAS
    extra_flags: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S  # per file; not part of the key


_AUTO: Any = object()


def _cuda_link(nvcc: str) -> tuple[str, ...]:
    """cudart from nvcc's toolkit; cuBLAS from where the toolchain finds it (torch's wheel first)."""
    dev = toolchain.find_cublas_dev(nvcc)
    if dev is None:
        return DEFAULT_CUDA_LINK
    return ("-lcudart", f"-L{dev.lib_dir}", f"-l:{dev.cublas}")


def nvcc_and_version(nvcc: str | None = None) -> tuple[str, str]:
    """``nvcc`` (this machine's when None: :func:`toolchain.find_nvcc`) and its version."""
    nvcc = nvcc or toolchain.find_nvcc()
    if not nvcc:
        raise ToolchainError("nvcc not found (set NVCC or CUDA_HOME, or put nvcc on the PATH)")
    try:
        return nvcc, toolchain.nvcc_version(nvcc)
    except toolchain.NativeBuildError as exc:
        raise ToolchainError(str(exc)) from exc


def make_config(
    device: str = "auto",
    *,
    ndebug: bool = False,
    nvcc: str | None = None,
    torch_info: TorchBuildInfo | None = None,
    cutlass: CutlassInfo | str | os.PathLike[str] | None = _AUTO,
    cuda_link: Sequence[str] | None = None,
    extra_flags: Sequence[str] = (),
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> BuildConfig:
    """A :class:`BuildConfig` for ``device`` (a label, an arch, or 'auto' for the GPU present).

    ``cutlass``: found automatically (:func:`find_cutlass`; builds go on without it when absent),
    None for none, or a folder. ``ndebug`` adds -DNDEBUG (our own kernels; off for imported sets,
    as the reference built them). Raises ToolchainError when nvcc or torch is missing.
    """
    nvcc, nvcc_ver = nvcc_and_version(nvcc)
    if cutlass is _AUTO:
        cut = find_cutlass()
    elif cutlass is None or isinstance(cutlass, CutlassInfo):
        cut = cutlass
    else:
        cut = cutlass_at(cutlass)
        if cut is None:
            raise UsageError(f"{cutlass} has no include/cutlass/cutlass.h")
    return BuildConfig(
        arch=arch_for(device),
        nvcc=nvcc,
        nvcc_version=nvcc_ver,
        torch=torch_info if torch_info is not None else torch_build_info(),
        cutlass=cut,
        ndebug=ndebug,
        cuda_link=tuple(cuda_link) if cuda_link is not None else _cuda_link(nvcc),
        extra_flags=tuple(extra_flags),
        timeout_s=float(timeout_s),
    )


def worker_toolchain(
    nvcc_version: str, cutlass_version: str | None, find: Callable[[], CutlassInfo | None] = find_cutlass
) -> tuple[str, CutlassInfo | None]:
    """This machine's nvcc and (when ``cutlass_version`` is given) CUTLASS headers, as ``find``
    finds them. A cluster worker compiles with its own tools, whose paths may differ from the
    driver's; their versions, which the driver's cache key names, must not: ToolchainError."""
    try:
        nvcc, found = nvcc_and_version()
    except ToolchainError as exc:
        raise ToolchainError(f"this worker has no usable nvcc: {exc}") from exc
    if found != nvcc_version:
        raise ToolchainError(f"this worker's nvcc is {found!r}, the build's is {nvcc_version!r}")
    if cutlass_version is None:
        return nvcc, None
    try:
        cutlass = find()
    except UsageError as exc:  # $CUTLASS_DIR names no CUTLASS
        raise ToolchainError(str(exc)) from exc
    if cutlass is None or cutlass.version != cutlass_version:
        have = cutlass.version if cutlass is not None else "none"
        raise ToolchainError(f"this worker's CUTLASS headers are {have}, the build's {cutlass_version}")
    return nvcc, cutlass


# ----------------------------------------------------------------------------------------------
# Commands and keys
# ----------------------------------------------------------------------------------------------


def compile_command(
    config: BuildConfig, wrapper: str | os.PathLike[str], output: str | os.PathLike[str], module: str
) -> list[str]:
    """The nvcc command line that builds ``wrapper`` into the extension module ``output``."""
    t = config.torch
    cmd = [config.nvcc, *SPEC_FLAGS]
    if config.ndebug:
        cmd.append("-DNDEBUG")
    cmd += [gencode(config.arch), *SHARED_FLAGS]
    cmd += [f"-DTORCH_EXTENSION_NAME={module}", "-DTORCH_API_INCLUDE_EXTENSION_H"]
    if t.cxx11_abi is not None:
        cmd.append(f"-D_GLIBCXX_USE_CXX11_ABI={t.cxx11_abi}")
    if config.cutlass is not None:
        cmd += [f"-I{d}" for d in config.cutlass.include_dirs]
    for d in (*t.include_dirs, t.python_include):
        cmd += ["-isystem", d]
    cmd += [*config.extra_flags, str(wrapper), "-o", str(output)]
    cmd += [f"-L{d}" for d in t.library_dirs]
    cmd += [f"-l{lib}" for lib in t.libraries]
    cmd += list(config.cuda_link)
    return cmd


def _portable(config: BuildConfig) -> BuildConfig:
    """``config`` with this machine's folders (torch's, Python's, CUTLASS's, cuBLAS's) named by
    their role: the versions say what is in them, so the same build made on another machine, with
    the same versions installed elsewhere, has the same key (builds made on a CPU machine serve a
    GPU machine's bench)."""
    # Which folders (CUDA's among torch's when CUDA_HOME is set) is the machine's too: one each.
    torch = replace(
        config.torch,
        include_dirs=("@TORCH_INCLUDE@",),
        library_dirs=("@TORCH_LIB@",),
        python_include="@PYTHON@",
    )
    cutlass = config.cutlass
    if cutlass is not None:
        cutlass = replace(cutlass, root="@CUTLASS@", include_dirs=("@CUTLASS_INCLUDE@",))
    link = tuple("-L@CUDA_LIB@" if a.startswith("-L") else a for a in config.cuda_link)
    return replace(config, nvcc="nvcc", torch=torch, cutlass=cutlass, cuda_link=link)


def build_key(source: bytes, function: str, config: BuildConfig) -> str:
    """Hex sha256 naming one build (see the module doc for what it covers)."""
    flags = compile_command(_portable(config), "@WRAPPER@", "@OUTPUT@", _MODULE_PLACEHOLDER)[1:]
    payload = {
        "format": BUILD_FORMAT,
        "source_sha256": hashlib.sha256(source).hexdigest(),
        "function": function,
        "wrapper": WRAPPER_TEMPLATE,
        "flags": flags,
        "arch": config.arch,
        "nvcc": config.nvcc_version,
        "torch": config.torch.version,
        "cxx11_abi": config.torch.cxx11_abi,
        "python": config.torch.python_tag,
        "cutlass": None if config.cutlass is None else config.cutlass.version,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def module_name(key: str) -> str:
    return f"cl2k_{key[:24]}"


def render_wrapper(source: Path, function: str, module: str) -> str:
    text = str(source)
    if any(ch in text for ch in '"\n\r'):
        raise ValueError(f"cannot #include a path containing quotes or line breaks: {text!r}")
    return (
        WRAPPER_TEMPLATE.replace("@SOURCE@", text).replace("@FUNCTION@", function).replace("@MODULE@", module)
    )


def default_cache_dir() -> Path:
    return toolchain.cache_dir("kernels", _ENV_CACHE)


def trim_log(text: str, limit: int = MAX_LOG_CHARS) -> str:
    """The compiler's output, cut in the middle when longer than ``limit`` (the first error stays)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = limit * 3 // 4
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - head - tail} characters cut ...]\n{text[-tail:]}"


# ----------------------------------------------------------------------------------------------
# Building
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BuildResult:
    """The outcome of building one file; never an exception for a file that does not compile.

    ``seconds`` is the compile time (for a cache hit, the time the cached build took) and
    ``cached`` says whether it was found in the cache. ``reason`` is a one-line summary of a
    failure ('' when ok); ``log`` the compiler's output, trimmed.
    """

    ok: bool
    module_path: Path | None
    log: str
    seconds: float
    cached: bool
    key: str = ""
    reason: str = ""


def _failure(reason: str, log: str = "", seconds: float = 0.0, key: str = "") -> BuildResult:
    """A failed build; ``log`` is the compiler's output, already trimmed (the reason when empty)."""
    return BuildResult(False, None, log or reason, seconds, False, key, reason)


class _ProcessRunner:
    """Runs nvcc processes in their own process groups so that a timeout or a cancel kills the
    whole tree (cicc, ptxas, the host compiler), not only nvcc."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen[str]] = set()
        self.cancelled = False

    def run(
        self, cmd: Sequence[str], timeout: float, cwd: Path, env: dict[str, str]
    ) -> tuple[int | None, str, bool]:
        """(exit status or None, output, timed out)."""
        with self._lock:
            if self.cancelled:
                return None, "cancelled", False
            try:
                proc = subprocess.Popen(
                    list(cmd),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    text=True,
                    errors="replace",
                    cwd=cwd,
                    env=env,
                    start_new_session=True,
                )
            except OSError as exc:
                return None, f"cannot run {cmd[0]}: {exc}", False
            self._procs.add(proc)
        try:
            try:
                out, _ = proc.communicate(timeout=timeout)
                return proc.returncode, out, False
            except subprocess.TimeoutExpired:
                self._kill(proc)
                out, _ = proc.communicate()
                return None, out, True
        finally:
            with self._lock:
                self._procs.discard(proc)

    @staticmethod
    def _kill(proc: subprocess.Popen[str]) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            procs = list(self._procs)
        for proc in procs:
            self._kill(proc)


# What a build folder holds besides the module: the wrapper that includes the kernel file.
WRAPPER = "wrapper.cu"


@dataclass(frozen=True)
class BuildTask:
    """One build as it travels to whatever compiles it (a thread here, or a cluster's worker):
    the kernel file's bytes, which the key names, where the file is, and its entry point."""

    key: str
    source: Path  # absolute, on the driver
    text: bytes
    function: str


@dataclass(frozen=True)
class CompileRecord:
    """What compiling one build gives back, wherever it ran (a cluster task returns it as a value):
    the module's bytes (None when it failed), the compiler's log (trimmed), seconds, a one-line
    reason when it failed, the command (the wrapper and the module named inside the build folder)
    and the Dask worker that compiled it ('' for this process)."""

    module: bytes | None
    log: str
    seconds: float
    reason: str = ""
    command: tuple[str, ...] = ()
    built_on: str = ""
    wrapper: str = ""  # the unit's translation unit when built with other files ('' alone)
    unit: tuple[str, ...] = ()  # the keys of the files built in that unit, this one's included


def _failed(reason: str, log: str = "", seconds: float = 0.0) -> CompileRecord:
    return CompileRecord(None, trim_log(log) if log else reason, seconds, reason)


def _holds(path: Path, data: bytes) -> bool:
    try:
        return path.read_bytes() == data
    except OSError:
        return False


def _source_for(task: BuildTask, work: Path) -> Path:
    """The file to compile: the original when this machine holds it with the bytes the key names
    (one host, a shared file system: the log names it, and its own quoted #includes resolve
    beside it), else a copy of those bytes in the build folder."""
    if _holds(task.source, task.text):
        return task.source
    copy = work / task.source.name
    copy.write_bytes(task.text)
    return copy


def _compile_in(work: Path, task: BuildTask, config: BuildConfig, runner: _ProcessRunner) -> CompileRecord:
    module = module_name(task.key)
    source = _source_for(task, work)
    try:
        (work / WRAPPER).write_text(render_wrapper(source, task.function, module))
    except ValueError as exc:
        return _failed(str(exc))
    record = _run_nvcc(work, config, runner, module)
    if record.module is not None and not _holds(source, task.text):
        return _failed(f"{task.source} changed while it was being built", record.log, record.seconds)
    return record


def _compile_unit_in(
    work: Path, tasks: Sequence[BuildTask], config: BuildConfig, runner: _ProcessRunner
) -> CompileRecord:
    """Several files in one translation unit (build_units): one module with each file's own."""
    unit = []
    for task in tasks:
        traits = build_units.shareable(task.text.decode("utf-8", errors="replace"))
        if traits is None:
            return _failed(f"{task.source} cannot share a translation unit")
        unit.append(
            build_units.UnitFile(str(_source_for(task, work)), task.function, traits, module_name(task.key))
        )
    try:
        wrapper = build_units.render_unit(unit, BINDING_TEMPLATE)
    except ValueError as exc:
        return _failed(str(exc))
    (work / WRAPPER).write_text(wrapper)
    record = _run_nvcc(work, config, runner, module_name(tasks[0].key))
    changed = next(
        (t.source for t, f in zip(tasks, unit, strict=True) if not _holds(Path(f.source), t.text)), None
    )
    if record.module is not None and changed is not None:
        return _failed(f"{changed} changed while it was being built", record.log, record.seconds)
    return replace(record, wrapper=wrapper, unit=tuple(t.key for t in tasks))


def _run_nvcc(work: Path, config: BuildConfig, runner: _ProcessRunner, module: str) -> CompileRecord:
    """nvcc on ``work``'s wrapper into ``module``.so, in ``work``."""
    output = work / f"{module}.so"
    cmd = compile_command(config, WRAPPER, output.name, module)  # relative to ``work``, nvcc's cwd
    env = dict(os.environ, TMPDIR=str(work))  # nvcc's intermediates go with the build folder
    start = time.monotonic()
    status, log, timed_out = runner.run(cmd, config.timeout_s, work, env)
    seconds = time.monotonic() - start
    if timed_out:
        return _failed(f"nvcc timed out after {config.timeout_s:g} s", log, seconds)
    if status != 0 or not output.is_file():
        first = next((ln.strip() for ln in log.splitlines() if "error" in ln.lower()), "")
        why = f"nvcc failed (exit status {status})" + (f": {first}" if first else "")
        return _failed(why[:300], log or why, seconds)
    return CompileRecord(output.read_bytes(), trim_log(log), seconds, command=tuple(cmd))


def _in_build_folder(
    scratch: Path | None, key: str, compile_in: Callable[[Path], CompileRecord]
) -> CompileRecord:
    """``compile_in(folder)`` in a fresh folder under ``scratch`` (the system's temporary folder
    when None), removed when done."""
    try:
        if scratch is not None:
            scratch.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".tmp-{key[:16]}-", dir=scratch))
    except OSError as exc:
        where = scratch or tempfile.gettempdir()
        return _failed(f"cannot make a build folder in {where}: {exc.strerror or exc}")
    try:
        return compile_in(work)
    except OSError as exc:
        return _failed(f"build folder error: {exc.strerror or exc}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def compile_task(
    task: BuildTask, config: BuildConfig, runner: _ProcessRunner, scratch: Path | None = None
) -> CompileRecord:
    """Compile one build in a fresh folder: the module comes back as bytes, for the driver to cache."""
    return _in_build_folder(scratch, task.key, lambda work: _compile_in(work, task, config, runner))


def compile_unit(
    tasks: Sequence[BuildTask], config: BuildConfig, runner: _ProcessRunner, scratch: Path | None = None
) -> list[CompileRecord]:
    """One record per task: several files compiled in one translation unit, or, for one file or
    a unit that fails, each file on its own (its log then says why it was built alone)."""
    if len(tasks) == 1:
        return [compile_task(tasks[0], config, runner, scratch)]
    together = _in_build_folder(
        scratch, tasks[0].key, lambda work: _compile_unit_in(work, tasks, config, runner)
    )
    if together.module is not None or runner.cancelled:
        return [together] * len(tasks)
    note = f"built alone: the unit of {len(tasks)} files failed ({together.reason})"
    alone = []
    for task in tasks:
        record = compile_task(task, config, runner, scratch)
        alone.append(replace(record, log=f"{note}\n{record.log}"))
    return alone


def _worker_config(config: BuildConfig) -> BuildConfig:
    """The driver's config with this worker's own nvcc and CUTLASS headers. ToolchainError when
    their versions are not the ones the key names, or torch's headers are not where the driver's
    config says (every worker needs the driver's environment at the same path)."""
    nvcc, cutlass = worker_toolchain(config.nvcc_version, config.cutlass.version if config.cutlass else None)
    absent = next((d for d in config.torch.include_dirs if not os.path.isdir(d)), None)
    if absent is not None:
        raise ToolchainError(f"this worker has no torch headers at {absent}, where the driver has them")
    return replace(config, nvcc=nvcc, cutlass=cutlass)


def compile_on_worker(tasks: Sequence[BuildTask], config: BuildConfig) -> list[CompileRecord]:
    """A cluster task: one unit of builds (:func:`compile_unit`) with the driver's config (the arch
    and flags of the GPU the kernels are for, not a guess of this worker's) and this worker's own
    nvcc and CUTLASS."""
    name = worker_name()
    try:
        own = _worker_config(config)
    except ToolchainError as exc:
        return [replace(_failed(f"{name}: {exc}"), built_on=name)] * len(tasks)
    return [replace(r, built_on=name) for r in compile_unit(tasks, own, _ProcessRunner())]


@dataclass
class _Job:
    """A build and the files that share it (identical contents)."""

    task: BuildTask
    files: list[KernelFile] = field(default_factory=list)


def _prepare(file: KernelFile, config: BuildConfig) -> _Job | BuildResult:
    try:
        data = Path(file.path).read_bytes()
    except OSError as exc:
        return _failure(f"cannot read {file.path}: {exc.strerror or exc}")
    if file.sha256 and hashlib.sha256(data).hexdigest() != file.sha256:
        return _failure(f"{file.path} changed since it was scanned")
    key = build_key(data, file.function, config)
    return _Job(BuildTask(key, Path(os.path.abspath(file.path)), data, file.function))


def _cached(cache: Path, key: str) -> BuildResult | None:
    entry = cache / key
    so = entry / f"{module_name(key)}.so"
    meta_path = entry / "build.json"
    if not (so.is_file() and meta_path.is_file()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
        return BuildResult(True, so, str(meta.get("log", "")), float(meta.get("seconds", 0.0)), True, key)
    except (OSError, ValueError):
        return None


def _clean_stale_tmp(cache: Path) -> None:
    now = time.time()
    try:
        entries = list(cache.glob(".tmp-*"))
    except OSError:
        return
    for tmp in entries:
        try:
            if now - tmp.stat().st_mtime > STALE_TMP_SECONDS:
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError:
            pass


def _discard(entry: Path, cache: Path, key: str) -> None:
    """Move a cache entry out of the way (atomically), then delete it."""
    trash = Path(tempfile.mkdtemp(prefix=f".tmp-{key[:16]}-old-", dir=cache))
    try:
        os.rename(entry, trash / "entry")
    except OSError:
        pass
    shutil.rmtree(trash, ignore_errors=True)


def _meta(task: BuildTask, record: CompileRecord, config: BuildConfig, entry: Path) -> dict[str, Any]:
    """build.json: how the entry was made, its command naming the files where they now lie (a
    unit's module is named after its first file: the command names that one)."""
    here = {WRAPPER, f"{module_name(task.key)}.so"}
    return {
        "key": task.key,
        "module": module_name(task.key),
        "source": str(task.source),
        "source_sha256": hashlib.sha256(task.text).hexdigest(),
        "function": task.function,
        "command": [str(entry / a) if a in here else a for a in record.command],
        "seconds": round(record.seconds, 3),
        "log": record.log,
        "arch": config.arch,
        "nvcc": config.nvcc_version,
        "torch": config.torch.version,
        "cutlass": None if config.cutlass is None else asdict(config.cutlass),
        "ndebug": config.ndebug,
        "built_on": record.built_on or None,  # a cluster worker's name; None: the driver
        # Built in one translation unit with these files (keys; this one's included): the module
        # holds their kernels too and runs this file's; the seconds are the unit's.
        "unit": list(record.unit) or None,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _store(
    task: BuildTask,
    record: CompileRecord,
    config: BuildConfig,
    cache: Path,
    force: bool,
    same_module: Path | None = None,
) -> BuildResult:
    """Keep a compiled module in the cache: its entry is written in a temporary folder and renamed
    into place whole. Only the driver writes here, whichever machine compiled. ``same_module``: an
    entry's module with these very bytes (a unit's first file), linked instead of copied."""
    if record.module is None:
        return _failure(record.reason, record.log, record.seconds, task.key)
    module = module_name(task.key)
    entry = cache / task.key
    try:
        cache.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{task.key[:16]}-", dir=cache))
    except OSError as exc:
        return _failure(f"cannot write the build cache {cache}: {exc.strerror or exc}", key=task.key)
    try:
        so = tmp / f"{module}.so"
        if not _link(same_module, so):
            so.write_bytes(record.module)
            so.chmod(0o755)  # as nvcc writes it
        (tmp / WRAPPER).write_text(record.wrapper or render_wrapper(task.source, task.function, module))
        (tmp / "build.json").write_text(json.dumps(_meta(task, record, config, entry), indent=1))
        if entry.exists() and (force or _cached(cache, task.key) is None):
            _discard(entry, cache, task.key)  # replaced on request, or a broken entry made by hand
        try:
            os.rename(tmp, entry)
        except OSError:
            # Another process finished the same build first: use its entry.
            hit = _cached(cache, task.key)
            if hit is None:
                return _failure(f"cannot move the build into {entry}", record.log, record.seconds, task.key)
            return BuildResult(True, hit.module_path, record.log, record.seconds, False, task.key)
        return BuildResult(True, entry / f"{module}.so", record.log, record.seconds, False, task.key)
    except (OSError, ValueError) as exc:
        return _failure(f"build folder error: {exc}", key=task.key)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _link(existing: Path | None, new: Path) -> bool:
    """A hard link to ``existing`` at ``new`` (one copy of a unit's module on disk), if it can be made."""
    if existing is None:
        return False
    try:
        os.link(existing, new)
        return True
    except OSError:
        return False


def _lost(exc: Exception) -> CompileRecord:
    """A build the cluster gave up on (its workers died on every try): its files' failure."""
    return _failed(f"the cluster could not build it: {exc!r}"[:300])


def _compiled_here(
    units: Sequence[Sequence[BuildTask]], config: BuildConfig, scratch: Path, jobs: int
) -> Iterator[tuple[int, list[CompileRecord]]]:
    runner = _ProcessRunner()
    pool = ThreadPoolExecutor(max_workers=max(1, min(jobs, len(units))), thread_name_prefix="kernel-build")
    futures = {pool.submit(compile_unit, unit, config, runner, scratch): i for i, unit in enumerate(units)}
    try:
        for future in as_completed(futures):
            try:
                records = future.result()
            except Exception as exc:  # a bug, not a compile error: keep it to these files
                records = [_failed(f"internal error while building: {exc!r}")] * len(units[futures[future]])
            yield futures[future], records
    finally:
        runner.cancel()  # an interrupt, or a caller that stopped early: no nvcc is left running
        pool.shutdown(wait=True, cancel_futures=True)


def _compiled(
    units: Sequence[Sequence[BuildTask]], config: BuildConfig, scratch: Path, jobs: int, cluster: str | None
) -> Iterator[tuple[int, list[CompileRecord]]]:
    """(index, a record per task) of each unit as it finishes: on the workers of the cluster at
    ``cluster``, else ``jobs`` nvcc processes here (their build folders under ``scratch``)."""
    with client_for(cluster) as client:
        if client is None:
            yield from _compiled_here(units, config, scratch, jobs)
        else:
            work = [(list(unit), config) for unit in units]
            for i, records in map_unordered(
                client, compile_on_worker, work, name="l2x-kernel", on_error=_lost
            ):
                yield i, records if isinstance(records, list) else [records] * len(units[i])


ProgressCallback = Callable[[int, int], None]
ResultCallback = Callable[[KernelFile, BuildResult], None]


def _to_compile(
    files: Sequence[KernelFile],
    config: BuildConfig,
    cache: Path,
    force: bool,
    report: Callable[[Iterable[KernelFile], BuildResult], None],
) -> list[_Job]:
    """The builds the cache lacks, each once with the files that share it; the files that cannot
    be read and the cache's hits are reported now."""
    by_key: dict[str, _Job] = {}
    for f in files:
        prep = _prepare(f, config)
        if isinstance(prep, BuildResult):
            report([f], prep)
        else:
            by_key.setdefault(prep.task.key, prep).files.append(f)
    missing: list[_Job] = []
    for job in by_key.values():
        hit = None if force else _cached(cache, job.task.key)
        if hit is None:
            missing.append(job)
        else:
            report(job.files, hit)
    return missing


def build_all(
    files: Iterable[KernelFile],
    jobs: int | None = None,
    progress: ProgressCallback | None = None,
    *,
    on_result: ResultCallback | None = None,
    config: BuildConfig | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
    cluster: str | None = None,
    per_unit: int = 1,
) -> dict[Path, BuildResult]:
    """Build every file (identical contents once), ``jobs`` nvcc processes at a time here, or on
    the workers of the Dask cluster whose scheduler is at ``cluster`` (tcp://HOST:8786).

    The cache stays here either way: it is read first, only the builds it lacks are compiled, and
    this process writes their entries (a worker returns the module's bytes). Returns
    {file.path: BuildResult}. As each file's result is known, ``on_result(file, result)`` and then
    ``progress(done, total)`` (files done so far, of all files) are called, in the calling thread.
    ``config`` defaults to :func:`make_config` for the GPU present. ``per_unit`` > 1 compiles up
    to that many files in one translation unit where they can share one (build_units: the torch
    and CuTe headers are then parsed once for them). A file that fails to build is a
    result with ok=False; only a missing toolchain (ToolchainError), a cluster that does not
    answer (ClusterError) or an interrupt raises, and an interrupt kills the nvcc processes
    running here (or cancels the cluster's tasks) before it propagates.
    """
    todo = list({f.path: f for f in files}.values())
    if not todo:
        return {}
    config = config if config is not None else make_config()
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if cache.is_dir():
        _clean_stale_tmp(cache)

    total = len(todo)
    results: dict[Path, BuildResult] = {}

    def report(group: Iterable[KernelFile], result: BuildResult) -> None:
        for file in group:
            results[file.path] = result
            if on_result is not None:
                on_result(file, result)
            if progress is not None:
                progress(len(results), total)

    missing = _to_compile(todo, config, cache, force, report)
    if not missing:
        return results  # nothing to compile: no cluster is even asked
    parallel = jobs or os.cpu_count() or 1
    units = [[missing[i] for i in unit] for unit in _units(missing, per_unit, parallel)]
    with closing(
        _compiled([[j.task for j in u] for u in units], config, cache, parallel, cluster)
    ) as compiled:
        for i, records in compiled:
            first: Path | None = None  # a unit's module, stored once and linked into its other entries
            for job, record in zip(units[i], records, strict=True):
                result = _store(job.task, record, config, cache, force, first if record.unit else None)
                if record.unit and result.ok and first is None:
                    first = result.module_path
                report(job.files, result)
    return results


def _units(jobs: Sequence[_Job], per_unit: int, slots: int) -> list[list[int]]:
    """The builds in translation units (indices into ``jobs``); one each when ``per_unit`` is 1."""
    if per_unit <= 1:
        return [[i] for i in range(len(jobs))]
    traits = [build_units.shareable(j.task.text.decode("utf-8", errors="replace")) for j in jobs]
    return build_units.group(traits, per_unit, slots)


def build_one(
    file: KernelFile,
    *,
    config: BuildConfig | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> BuildResult:
    return build_all([file], jobs=1, config=config, cache_dir=cache_dir, force=force)[file.path]


# ----------------------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------------------

_LOADED: dict[str, Any] = {}
_LOAD_LOCK = threading.Lock()


def load_module(module_path: str | os.PathLike[str]) -> Callable[[Any, Any, Any, Any], None]:
    """Import a built module and return its ``run(a, b, b_col_major, c)``.

    torch is imported first: the module links against libtorch and libc10 without an rpath, and
    relies on the copies torch has loaded. Raises ImportError with the path when it cannot load.
    """
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        raise ToolchainError(f"loading a kernel module needs torch: {exc}") from exc
    path = Path(module_path).resolve()
    with _LOAD_LOCK:
        module = _LOADED.get(str(path))
        if module is None:
            name = path.name.split(".")[0]
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"not an extension module: {path}")
            try:
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            except ImportError as exc:
                raise ImportError(f"cannot load kernel module {path}: {exc}") from exc
            _LOADED[str(path)] = module
    return module.run
