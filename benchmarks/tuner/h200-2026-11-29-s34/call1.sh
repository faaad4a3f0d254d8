#!/usr/bin/env bash
# Session 34, call 1 (nvidia-h200): session 33's next_call1.sh as planned (library 752a70d4:
# GPU tests of the c4/p4 kernels, the probe's slabbed and pitched rows, the search of 64 tiny
# configs at K = 256-1024, A/B, merge). Carried: .whl, .carry.
exec bash benchmarks/tuner/h200-2026-11-29-s33/next_call1.sh
