#!/usr/bin/env bash
# Session 33, call 1 (nvidia-h200, one GPU; issue 15): session 32's next_call1.sh as planned there
# (GPU tests of library b2ae9ede, bisect, the search of the 102 tiny configs at K = 128-1024, A/B,
# merge). Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz}.
exec bash benchmarks/tuner/h200-2026-11-29-s32/next_call1.sh
