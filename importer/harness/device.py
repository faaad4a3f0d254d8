"""The GPU a run measures on: which GPUs are visible, their labels, and the provenance every
run records (SPEC §7: GPU name, SM count, L2, clocks, driver, CUDA, cuBLAS and torch versions).
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import time

from cuda_l2_explorer.db.errors import NoGPUError, UsageError


def visible_gpus() -> int:
    """Number of CUDA GPUs torch sees; raises NoGPUError with a one-line reason."""
    try:
        import torch
    except ImportError as exc:
        raise NoGPUError("bench needs torch with CUDA: pip install 'cuda-l2-explorer[gpu]'") from exc
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        raise NoGPUError("no CUDA GPU is visible (torch.cuda.is_available() is False)")
    return torch.cuda.device_count()


def parse_gpus(text: str, available: int) -> list[int]:
    if text == "all":
        return list(range(available))
    try:
        gpus = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise UsageError(f"--gpus takes 'all' or indexes like 0,1 (got {text!r})") from None
    if not gpus or any(g < 0 or g >= available for g in gpus):
        raise UsageError(f"--gpus {text}: this machine has GPUs 0..{available - 1}")
    return gpus


def gpu_label(name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'h100'; unknown models keep a slug of their name."""
    lowered = name.lower()
    for label in ("h200", "h100", "h800", "a100", "a800", "l40s", "b200", "gb200", "4090", "3090"):
        if label in lowered:
            return label
    return "".join(ch if ch.isalnum() else "-" for ch in lowered).strip("-") or "gpu"


def device_info() -> dict:
    """Provenance of the GPU this process sees as device 0 (SPEC §7), for the worker's hello."""
    import torch

    props = torch.cuda.get_device_properties(0)
    info = {
        "gpu_name": props.name,
        "sm_count": props.multi_processor_count,
        "l2_bytes": int(getattr(props, "L2_cache_size", 0) or 0),
        "memory_bytes": int(props.total_memory),
        "capability": list(torch.cuda.get_device_capability(0)),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }
    info.update(nvidia_smi())
    try:
        from cuda_l2_explorer.importer.harness import baselines

        versions = baselines.versions(baselines.load_baselines())
        info["cublas"] = versions.get("cublas")
        info["cublas_versions"] = versions
    except Exception as exc:  # recorded, and the baselines fail visibly later
        info["cublas_error"] = str(exc).splitlines()[0]
    return info


def visible_device(index: int) -> str:
    """The CUDA_VISIBLE_DEVICES entry of this process's ``index``-th GPU (the index itself when the
    variable is unset): what a child process gets to see that GPU alone."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    return visible.split(",")[index] if visible else str(index)


def nvidia_smi() -> dict:
    """Driver and current clocks of the worker's GPU (empty when nvidia-smi is absent)."""
    visible = visible_device(0) or "0"
    try:
        out = subprocess.run(
            [
                "nvidia-smi",
                f"--id={visible}",
                "--query-gpu=driver_version,clocks.sm,clocks.mem",
                "--format=csv,noheader,nounits",
            ],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        driver, sm, mem = (x.strip() for x in out.splitlines()[0].split(","))
        return {"driver": driver, "clock_sm_mhz": int(float(sm)), "clock_mem_mhz": int(float(mem))}
    except Exception:
        return {}


_NVML_WORKS: bool | None = None


def sm_clock_mhz(torch) -> int | None:
    """The current SM clock: through NVML (torch.cuda.clock_rate, microseconds) when pynvml is
    there, else nvidia-smi (a process, ~25 ms: a second a 40-config grid)."""
    global _NVML_WORKS
    if _NVML_WORKS is not False:
        try:
            value = int(torch.cuda.clock_rate())
            _NVML_WORKS = True
            return value
        except Exception:
            _NVML_WORKS = False
    return nvidia_smi().get("clock_sm_mhz")


def spin_cycles_per_second(torch) -> float:
    """How many torch.cuda._sleep cycles the GPU spins in a second."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda._sleep(1_000_000)
    end.record()
    end.synchronize()
    return 1_000_000 / max(start.elapsed_time(end) / 1e3, 1e-9)


class StreamGate:
    """Holds a CUDA stream until the host opens it: cuStreamWaitValue32 on a pinned counter.

    The isolated call queues its start event, the call and its end event behind a closed gate and
    then opens it, so the events span the call's own time on the GPU, never the host's issue time,
    and the GPU idles (no spin kernel) until everything is queued. A launcher that waits for its
    stream would wait for the gate forever: only launchers that never synchronise go behind it.
    """

    GEQ = 0x0  # CU_STREAM_WAIT_VALUE_GEQ: released once the counter reaches the value

    def __init__(self, torch) -> None:
        cuda = ctypes.CDLL("libcuda.so.1")
        self._wait = getattr(cuda, "cuStreamWaitValue32_v2", None) or cuda.cuStreamWaitValue32
        self._wait.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint]
        self._wait.restype = ctypes.c_int
        device_pointer = cuda.cuMemHostGetDevicePointer_v2
        device_pointer.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_void_p, ctypes.c_uint]
        device_pointer.restype = ctypes.c_int
        self._counter = torch.zeros(1, dtype=torch.int32, pin_memory=True)  # kept: the GPU reads it
        self._cell = ctypes.c_int32.from_address(self._counter.data_ptr())
        address = ctypes.c_uint64()
        status = device_pointer(ctypes.byref(address), ctypes.c_void_p(self._counter.data_ptr()), 0)
        if status:
            raise RuntimeError(f"cuMemHostGetDevicePointer failed ({status})")
        self._address = address.value
        self._closed = 0

    def close(self, stream: int) -> None:
        """Queue a wait on ``stream`` (a cudaStream_t, 0 the default) until the next :meth:`open`."""
        status = self._wait(ctypes.c_void_p(stream or None), self._address, self._closed + 1, self.GEQ)
        if status:
            raise RuntimeError(f"cuStreamWaitValue32 failed ({status})")
        self._closed += 1

    def open(self) -> None:
        self._cell.value = self._closed


_GATES: dict[int, StreamGate | None] = {}


def stream_gate(torch) -> StreamGate | None:
    """This process's gate, once it has been seen to hold a stream and let it go; None where the
    driver does not offer stream memory operations (the isolated call then holds by a spin)."""
    device = torch.cuda.current_device()
    if device not in _GATES:
        _GATES[device] = _working_gate(torch)
    return _GATES[device]


def _working_gate(torch) -> StreamGate | None:
    try:
        gate = StreamGate(torch)
        stream = torch.cuda.current_stream()
        torch.cuda.synchronize()
        gate.close(stream.cuda_stream)
    except (OSError, AttributeError, RuntimeError):
        return None
    passed = torch.cuda.Event()
    try:
        passed.record(stream)
        time.sleep(0.002)
        held = not passed.query()
    finally:
        gate.open()
    passed.synchronize()
    return gate if held else None
