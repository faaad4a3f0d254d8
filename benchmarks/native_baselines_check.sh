#!/usr/bin/env bash
# One-shot device check of the native cuBLAS/cuBLASLt baselines (importer/harness/baselines.py).
#   bash benchmarks/native_baselines_check.sh            # on a GPU machine, from the repo root
# Uses $CUDA_L2_EXPLORER_BASELINES_LIB, else the newest .native-build/libhgemm_baselines-*.so,
# else builds one. Writes env.txt, report.txt, pytest.txt under $OUT (default /tmp/native-check).
# The timings here are a warm-L2 sanity check (labelled so), not the product's measurement protocol.
set -uo pipefail
OUT=${OUT:-/tmp/native-check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [ -z "${CUDA_L2_EXPLORER_BASELINES_LIB:-}" ]; then
  LIB=$(ls -t .native-build/libhgemm_baselines-*.so 2>/dev/null | head -1)
  [ -n "$LIB" ] && export CUDA_L2_EXPLORER_BASELINES_LIB=$PWD/$LIB
fi
echo "library: ${CUDA_L2_EXPLORER_BASELINES_LIB:-<build>}"

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  nvcc --version | tail -2
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  echo "--- ldconfig cublas:"; ldconfig -p | grep -i cublas
  echo "--- toolkit cublas:"; ls -l /usr/local/cuda*/lib64/libcublas* /usr/local/cuda*/targets/*/lib/libcublas* 2>&1 | head
  echo "--- wheels:"; python3 -c 'import nvidia, glob; [print(p) for d in nvidia.__path__ for p in sorted(glob.glob(d + "/*/lib/libcublas*") + glob.glob(d + "/*/include/cublas_api.h"))]'
  echo "--- LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

echo "=== load without torch (preload path)"
python3 - <<'PY' 2>&1 | tee "$OUT/report.txt"
from cuda_l2_explorer.importer.harness import baselines as native
lib = native.load_baselines()
print("versions:", native.versions(lib))
with native.CublasBaselines(lib=lib) as ctx:
    print("context:", ctx.info())
    plan = ctx.lt_prepare("nn", 4096, 4096, 4096, max_algos=100)
    print("4096^3 nn candidates:", plan.n_algos, "top-1:", ctx.lt_algo_info(plan, 0))
PY

echo "=== device build check (nvcc + cuBLAS headers on this machine)"
python3 - <<'PY' 2>&1 | tee -a "$OUT/report.txt"
import time
from cuda_l2_explorer.importer.harness import baselines as native
t = time.time()
try:
    p = native.build_baselines("/tmp/native-build-check")
    print("built on device:", p.name, f"{time.time() - t:.1f}s", native.find_cublas_dev())
except native.NativeBuildError as exc:
    print("device build failed:", exc)
PY

echo "=== warm-L2 sanity timings (us per call, median of 5 samples)"
python3 - <<'PY' 2>&1 | tee -a "$OUT/report.txt"
import torch
from cuda_l2_explorer.importer.harness import baselines as native
ctx32, ctx16 = native.CublasBaselines(), native.CublasBaselines(compute16=True)
print("versions with torch loaded first:", ctx32.versions())
def t_us(fn, reps):
    st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3): fn()
    out = []
    for _ in range(5):
        st.record()
        for _ in range(reps): fn()
        en.record(); en.synchronize(); out.append(st.elapsed_time(en) * 1e3 / reps)
    return sorted(out)[2]
for M, N, K in [(64, 64, 64), (128, 4096, 512), (4096, 4096, 4096), (8, 8192, 1024), (2048, 256, 16384), (8192, 8192, 8192)]:
    a = torch.randn(M, K, device="cuda").half(); b = torch.randn(K, N, device="cuda").half()
    bc = b.t().contiguous().t(); c = torch.empty(M, N, device="cuda").half()
    ref = a.double() @ b.double()
    reps = max(3, min(200, int(2e10 / (2 * M * N * K))))
    s = native.current_stream()
    row = {"torch": t_us(lambda: torch.matmul(a, b, out=c), reps)}
    for lay, bb in (("nn", b), ("tn", bc)):
        row["cuBLAS-" + lay] = t_us(lambda: ctx32.cublas(lay, M, N, K, a.data_ptr(), bb.data_ptr(), c.data_ptr(), s), reps)
        p = ctx32.lt_prepare(lay, M, N, K, max_algos=100)
        ts = [t_us(lambda i=i: ctx32.lt(p, i, a.data_ptr(), bb.data_ptr(), c.data_ptr(), s), reps) for i in range(p.n_algos)]
        row["Lt-heur-" + lay] = ts[0]
        row["Lt-auto-" + lay] = min(ts)
        row["n-" + lay] = p.n_algos
    ctx16.cublas("nn", M, N, K, a.data_ptr(), b.data_ptr(), c.data_ptr(), s); torch.cuda.synchronize()
    e16 = ((c.double() - ref).norm() / ref.norm()).item()
    ctx32.cublas("nn", M, N, K, a.data_ptr(), b.data_ptr(), c.data_ptr(), s); torch.cuda.synchronize()
    e32 = ((c.double() - ref).norm() / ref.norm()).item()
    tf = 2 * M * N * K / (min(v for k, v in row.items() if not k.startswith("n-")) * 1e-6) / 1e12
    print(f"{M}x{N}x{K}: " + " ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())
          + f" | best {tf:.0f} TFLOP/s | err32 {e32:.2e} err16 {e16:.2e}")
PY

echo "=== pytest"
python3 -m pytest -q tests/gpu/test_native_baselines.py -p no:cacheprovider -rA 2>&1 | tee "$OUT/pytest.txt" | tail -40
exit "${PIPESTATUS[0]}"
