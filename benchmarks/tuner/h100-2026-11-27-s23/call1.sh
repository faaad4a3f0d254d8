#!/usr/bin/env bash
# Session 23, device call 1 (issue 15): the search of the large regime's 104 configs where the
# bundled grid (06080f57) has ours under 0.97 of the best baseline, worst first, over library
# ea3dcd1c980a45f74642 (69 kernels: the macro build and swap-AB 128x160 c2x1 s5, which the cost
# model shortlists as its own class at every large shape), search only; then the changed picks
# benched old, new, old, new in one store beside torch.matmul and three cuBLASLt baselines.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h100-2026-11-27-s23
bash benchmarks/tuner/search_then_ab.sh $D/call1_configs.txt "" ${TUNE_LIMIT:-360} 575
