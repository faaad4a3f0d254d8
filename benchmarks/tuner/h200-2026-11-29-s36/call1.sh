#!/usr/bin/env bash
# Session 36, call 1 (nvidia-h200, one GPU; issue 15): session 35's next_call1.sh as planned (its
# header lists the prep): GPU tests on the spread library (b704c710 + spread_store.patch), the two
# timelines, lib_ab over the 63 picks with K groups.
bash benchmarks/tuner/h200-2026-11-29-s35/next_call1.sh
