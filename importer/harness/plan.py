"""What a run measures: the shapes, the protocol, the baselines, each config's kernel, and the
job each config becomes for a worker process."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.views import BASELINES as ALL_BASELINES
from cuda_l2_explorer.importer.harness.protocol import HARNESS_VERSION, ProtocolSettings

# The module a GPU worker runs (``python -m``); a plan may name another that serves more job
# kinds (the tuner's worker serves its search and kernels of its compiled library).
WORKER_MODULE = "cuda_l2_explorer.importer.harness.worker"
CONFIG_JOB = "config"  # measure one config's kernel beside the baselines


@dataclass
class KernelEntry:
    """What a worker needs to run one config's kernel (None module = baselines only)."""

    module: str | None = None
    pad_shape: tuple[int, int, int] | None = None
    build_error: str | None = None
    # A kernel of a compiled library instead of a built module: {"path", "kernel", "variant"};
    # only a worker with a library loader runs it (the plan's ``worker``).
    library: dict | None = None

    @property
    def runnable(self) -> bool:
        return self.module is not None or self.library is not None


@dataclass
class BenchPlan:
    shapes: list[Shape]
    settings: ProtocolSettings
    baselines: tuple[str, ...] = ALL_BASELINES
    set_id: str | None = None
    accumulator: str = "F32F16F16F32"
    kernels: dict[Shape, KernelEntry] = field(default_factory=dict)
    gpus: list[int] = field(default_factory=lambda: [0])
    timeout_s: float = 300.0
    time_budget_s: float | None = None  # no new config starts after this long; resumable
    l2: str = "cold"
    # The run's kind in the store: 'bench' measures kernels and baselines; another kind (the
    # tuner's 'tune') sends jobs of kind `job` with the fields `job_fields` to `worker`.
    kind: str = "bench"
    job: str = CONFIG_JOB
    job_fields: dict[str, Any] = field(default_factory=dict)
    worker: str = WORKER_MODULE
    cutlass: str | None = None  # the CUTLASS version the kernels were built with (provenance)
    # Server mode: per config, the cuBLASLt auto-tuning choice of an earlier offline run, kept
    # instead of tuning again (the runner fills it from the store; see reads.autotune_choices).
    lt_choices: dict[Shape, dict[str, int]] = field(default_factory=dict)
    # Server mode: per config, an earlier offline run's launcher audit of the same kernel (see
    # reads.offline_audits), kept instead of auditing again.
    audits: dict[Shape, dict[str, Any]] = field(default_factory=dict)
    # This call measures only these of the run's shapes (an imported set's kernels built so far);
    # the others stay pending for a later call. None: every pending shape.
    measure_only: frozenset[Shape] | None = None
    # A Dask scheduler's address: the configs are measured on its GPU workers
    # (harness.cluster_lane), not on this machine's GPUs.
    cluster: str | None = None

    def params(self) -> dict[str, Any]:
        """The plan as the run's ``params`` record (with the harness version)."""
        return {
            "harness_version": HARNESS_VERSION,
            "protocol": asdict(self.settings),
            "baselines": list(self.baselines),
            "shapes": [str(s) for s in self.shapes],
            "l2": self.l2,
            "gpus": self.gpus,
            "timeout_s": self.timeout_s,
            "time_budget_s": self.time_budget_s,
            "workspace_bytes": 32 << 20,
            "accumulator": self.accumulator,
            "kernels": {str(s): asdict(e) for s, e in self.kernels.items()},
            "job": self.job,
            "job_fields": self.job_fields,
            **({"cluster": self.cluster} if self.cluster else {}),
        }


def job_for(plan: BenchPlan, shape: Shape, with_kernel: bool) -> dict[str, Any]:
    """The worker job for one config of ``plan`` (its kernel left out unless ``with_kernel``)."""
    if plan.job != CONFIG_JOB:
        return {"op": plan.job, "m": shape.m, "n": shape.n, "k": shape.k, **plan.job_fields}
    entry = plan.kernels.get(shape) if with_kernel else None
    return {
        "op": CONFIG_JOB,
        "m": shape.m,
        "n": shape.n,
        "k": shape.k,
        "accumulator": plan.accumulator,
        "baselines": list(plan.baselines),
        "protocol": asdict(plan.settings),
        "l2": plan.l2,
        "kernel_module": entry.module if entry else None,
        "kernel_library": entry.library if entry else None,
        "pad_shape": list(entry.pad_shape) if entry and entry.pad_shape and entry.module else None,
        "lt_choices": plan.lt_choices.get(shape),
        "audit_reuse": plan.audits.get(shape) if entry else None,
    }
