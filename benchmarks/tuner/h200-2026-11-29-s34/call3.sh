#!/usr/bin/env bash
# Session 34, calls 3 and 4 (nvidia-h200, one GPU; issue 15): the H200 set's grid with calls 1-2's
# merges and session 33 call 5's (56 picks changed against grid d10fddf2) on library 5cb65fc4,
# offline, graph-timed, cold L2, beside the seven baselines (session 33's call2.sh); resumed from
# .carry/grid.duckdb.xz when carried (call 4, BUDGET=165).
exec bash benchmarks/tuner/h200-2026-11-29-s33/call2.sh
