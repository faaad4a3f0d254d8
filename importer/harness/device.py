"""The GPU a run measures on: which GPUs are visible, their labels, and the provenance every
run records (SPEC §7: GPU name, SM count, L2, clocks, driver, CUDA, cuBLAS and torch versions).
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import time
from dataclasses import dataclass, field

from cuda_l2_explorer.db.errors import NoGPUError, UsageError


def visible_gpus() -> int:
    """Number of CUDA GPUs torch sees; raises NoGPUError with a one-line reason."""
    try:
        import torch
    except ImportError as exc:
        raise NoGPUError(
            "measuring needs torch with CUDA (bench, tune): pip install 'cuda-l2-explorer[gpu]'"
        ) from exc
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


@dataclass
class GpuType:
    """One GPU type a run measures on: its label (as the store names GPUs), the device info of its
    first worker's hello (the run's provenance) and, on a cluster, the addresses of its workers."""

    label: str
    info: dict
    workers: list[str] = field(default_factory=list)


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
    """Holds a CUDA stream until the host opens it: the native library's hb_gate, a one-thread
    kernel polling a pinned counter, with a timeout on the GPU's own timer.

    The isolated call queues its start event, the call and its end event behind a closed gate and
    then opens it, so the events span the call's own time on the GPU, never the host's issue time,
    however the SM clock stands (a spin counts cycles). A launcher that waits for its stream never
    sees the gate open: the timeout ends the wait, and :attr:`timed_out` tells the caller.
    """

    TIMEOUT_NS = 50_000_000  # 50 ms: far beyond any queueing; a synchronising launcher pays it once

    def __init__(self, torch, baselines) -> None:
        self._baselines = baselines
        self._counter = torch.zeros(2, dtype=torch.int32, pin_memory=True)  # kept: the GPU reads it
        self._cells = (ctypes.c_int32 * 2).from_address(self._counter.data_ptr())
        self._closed = 0

    def close(self, stream: int) -> None:
        """Queue a hold on ``stream`` (a cudaStream_t, 0 the default) until the next :meth:`open`."""
        self._cells[1] = 0
        self._baselines.gate(self._counter.data_ptr(), self._closed + 1, self.TIMEOUT_NS, stream)
        self._closed += 1

    def open(self) -> None:
        self._cells[0] = self._closed

    @property
    def timed_out(self) -> bool:
        """Whether the last hold ended by its timeout (read once the stream has passed it)."""
        return bool(self._cells[1])


# By the native context's id, the context kept beside its gate so that the id cannot be reused by
# another object while the entry lives (a worker keeps its contexts for its whole life anyway).
_GATES: dict[int, tuple[object, StreamGate | None]] = {}


def stream_gate(torch, baselines) -> StreamGate | None:
    """The gate of this native context, once it has been seen to hold the stream and let it go;
    None without the native library (the isolated call then holds by a spin)."""
    if baselines is None or not hasattr(baselines, "gate"):
        return None
    if id(baselines) not in _GATES:
        _GATES[id(baselines)] = (baselines, _working_gate(torch, baselines))
    return _GATES[id(baselines)][1]


def _working_gate(torch, baselines) -> StreamGate | None:
    try:
        gate = StreamGate(torch, baselines)
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
    return gate if held and not gate.timed_out else None
