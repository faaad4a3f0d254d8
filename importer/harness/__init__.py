"""The GPU benchmark harness: measures kernels and baselines under the SPEC §7 protocol.

plan        what a run measures (BenchPlan, KernelEntry) and the job each config becomes
runner      the orchestrator: a lane per GPU (or one over a cluster), per-config commits,
            resume, progress
measurer    one GPU's measurements: the isolated worker process, crash/hang handling
cluster_lane  the configs measured on a Dask cluster's GPU workers (bench --cluster)
worker      the GPU process (``python -m cuda_l2_explorer.importer.harness.worker``) and the
            pieces other workers reuse: input sets, implementations, correctness, timing backend
messages    the worker protocol; one Result type answers every job kind
protocol    pure timing and statistics logic (rounds, rotation sizing, correctness verdicts)
audit       the launcher audit (per-call sync or allocation, hidden streams or threads)
device      visible GPUs, GPU labels, provenance (device info, nvidia-smi clocks)
baselines   native cuBLAS / cuBLASLt baselines (csrc/hgemm_baselines.cu, through ctypes)
build       SPEC §4 kernel files built into importable modules (parallel, cached)
toolchain   nvcc, cuBLAS headers and libraries, build cache folders
"""
