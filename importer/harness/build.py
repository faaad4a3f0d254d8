"""Build SPEC section 4 kernel files into importable torch extension modules, in parallel, cached.

Each ``M_N_K.cu`` file is compiled by nvcc directly (not torch's JIT ``load``, so that the flags
and the cache are ours) together with a generated wrapper translation unit that ``#include``s the
file by absolute path and binds its entry point as ``run(a, b, b_col_major, c)`` with pybind11
(the GIL is released during the call). The flags are SPEC section 4's, plus what a torch
extension needs (see :func:`compile_command`); ``-DNDEBUG`` only when asked (our own builds).

Cache: ``<cache>/<key>/<module>.so`` with ``build.json`` (command, seconds, compiler log, the
key's inputs) and the wrapper beside it. The key is a sha256 over the file's bytes, the wrapper
template, the entry point, the flags, the arch, ``nvcc --version``, the torch version and C++
ABI, the Python ABI and the CUTLASS version and path, so files with identical text share one
build. A build happens in a temporary folder inside the cache (nvcc's own temporaries too) that is
renamed into place only when it succeeded: a failed, timed-out or killed build leaves no entry.
Failures are not cached; a file that does not compile is simply rebuilt next time.

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
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from cuda_l2_explorer.db.errors import NoGPUError, UsageError
from cuda_l2_explorer.importer.harness import toolchain
from cuda_l2_explorer.importer.kernelset import KernelFile

BUILD_FORMAT = 1  # bump when the cache layout or the wrapper's contract changes

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
    nvcc = nvcc or toolchain.find_nvcc()
    if not nvcc:
        raise ToolchainError("nvcc not found (set NVCC or CUDA_HOME, or put nvcc on the PATH)")
    try:
        nvcc_ver = toolchain.nvcc_version(nvcc)
    except toolchain.NativeBuildError as exc:
        raise ToolchainError(str(exc)) from exc
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


def build_key(source: bytes, function: str, config: BuildConfig) -> str:
    """Hex sha256 naming one build (see the module doc for what it covers)."""
    flags = compile_command(config, "@WRAPPER@", "@OUTPUT@", _MODULE_PLACEHOLDER)[1:]
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
        "cutlass": None if config.cutlass is None else [config.cutlass.root, config.cutlass.version],
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
    return BuildResult(False, None, trim_log(log) if log else reason, seconds, False, key, reason)


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


@dataclass
class _Job:
    key: str
    source: Path
    sha256: str
    function: str
    files: list[KernelFile] = field(default_factory=list)


def _prepare(file: KernelFile, config: BuildConfig) -> _Job | BuildResult:
    try:
        data = Path(file.path).read_bytes()
    except OSError as exc:
        return _failure(f"cannot read {file.path}: {exc.strerror or exc}")
    digest = hashlib.sha256(data).hexdigest()
    if file.sha256 and digest != file.sha256:
        return _failure(f"{file.path} changed since it was scanned")
    key = build_key(data, file.function, config)
    return _Job(key=key, source=Path(os.path.abspath(file.path)), sha256=digest, function=file.function)


def _cached(entry: Path, module: str, key: str) -> BuildResult | None:
    so = entry / f"{module}.so"
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


def _build_job(
    job: _Job, config: BuildConfig, cache: Path, runner: _ProcessRunner, force: bool
) -> BuildResult:
    module = module_name(job.key)
    entry = cache / job.key
    if not force:
        hit = _cached(entry, module, job.key)
        if hit is not None:
            return hit
    try:
        cache.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{job.key[:16]}-", dir=cache))
    except OSError as exc:
        return _failure(f"cannot write the build cache {cache}: {exc.strerror or exc}", key=job.key)
    try:
        try:
            wrapper_text = render_wrapper(job.source, job.function, module)
        except ValueError as exc:
            return _failure(str(exc), key=job.key)
        wrapper = tmp / "wrapper.cu"
        wrapper.write_text(wrapper_text)
        output = tmp / f"{module}.so"
        cmd = compile_command(config, wrapper, output, module)
        env = dict(os.environ, TMPDIR=str(tmp))  # nvcc's intermediates go with the build folder
        start = time.monotonic()
        status, log, timed_out = runner.run(cmd, config.timeout_s, tmp, env)
        seconds = time.monotonic() - start
        if timed_out:
            return _failure(f"nvcc timed out after {config.timeout_s:g} s", log, seconds, job.key)
        if status != 0 or not output.is_file():
            first = next((ln.strip() for ln in log.splitlines() if "error" in ln.lower()), "")
            why = f"nvcc failed (exit status {status})" + (f": {first}" if first else "")
            return _failure(why[:300], log or why, seconds, job.key)
        try:
            same = hashlib.sha256(job.source.read_bytes()).hexdigest() == job.sha256
        except OSError:
            same = False
        if not same:
            return _failure(f"{job.source} changed while it was being built", log, seconds, job.key)
        final_cmd = [str(entry / Path(a).name) if a in (str(wrapper), str(output)) else a for a in cmd]
        meta = {
            "key": job.key,
            "module": module,
            "source": str(job.source),
            "source_sha256": job.sha256,
            "function": job.function,
            "command": final_cmd,
            "seconds": round(seconds, 3),
            "log": trim_log(log),
            "arch": config.arch,
            "nvcc": config.nvcc_version,
            "torch": config.torch.version,
            "cutlass": None if config.cutlass is None else asdict(config.cutlass),
            "ndebug": config.ndebug,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (tmp / "build.json").write_text(json.dumps(meta, indent=1))
        if entry.exists() and (force or _cached(entry, module, job.key) is None):
            _discard(entry, cache, job.key)  # replaced on request, or a broken entry made by hand
        try:
            os.rename(tmp, entry)
        except OSError:
            # Another process finished the same build first: use its entry.
            hit = _cached(entry, module, job.key)
            if hit is not None:
                return BuildResult(True, hit.module_path, trim_log(log), seconds, False, job.key)
            return _failure(f"cannot move the build into {entry}", log, seconds, job.key)
        return BuildResult(True, entry / f"{module}.so", trim_log(log), seconds, False, job.key)
    except OSError as exc:
        return _failure(f"build folder error: {exc.strerror or exc}", key=job.key)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


ProgressCallback = Callable[[int, int], None]
ResultCallback = Callable[[KernelFile, BuildResult], None]


def build_all(
    files: Iterable[KernelFile],
    jobs: int | None = None,
    progress: ProgressCallback | None = None,
    *,
    on_result: ResultCallback | None = None,
    config: BuildConfig | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> dict[Path, BuildResult]:
    """Build every file (identical contents once), ``jobs`` nvcc processes at a time.

    Returns {file.path: BuildResult}. As each file's result is known, ``on_result(file, result)``
    and then ``progress(done, total)`` (files done so far, of all files) are called, in the calling
    thread. ``config`` defaults to :func:`make_config`
    for the GPU present. A file that fails to build is a result with ok=False; only a missing
    toolchain (ToolchainError) or an interrupt raises, and an interrupt kills the running nvcc
    processes before it propagates.
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

    def report(file: KernelFile, result: BuildResult) -> None:
        results[file.path] = result
        if on_result is not None:
            on_result(file, result)
        if progress is not None:
            progress(len(results), total)

    by_key: dict[str, _Job] = {}
    for f in todo:
        prep = _prepare(f, config)
        if isinstance(prep, BuildResult):
            report(f, prep)
        else:
            by_key.setdefault(prep.key, prep).files.append(f)
    if not by_key:
        return results

    runner = _ProcessRunner()
    workers = max(1, min(jobs or os.cpu_count() or 1, len(by_key)))
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kernel-build")
    pending: dict[Future[BuildResult], _Job] = {
        pool.submit(_build_job, job, config, cache, runner, force): job for job in by_key.values()
    }
    try:
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                job = pending.pop(fut)
                try:
                    result = fut.result()
                except Exception as exc:  # a bug, not a compile error: keep it to this file
                    result = _failure(f"internal error while building: {exc!r}", key=job.key)
                for f in job.files:
                    report(f, result)
    except BaseException:
        runner.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results


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
