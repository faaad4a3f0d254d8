#!/usr/bin/env bash
# Session 36, calls 3 and 4 (nvidia-h200, one GPU; issue 15): the H200 set's grid with call 2's 18
# merges (wide wgmma tiles and others) and session 35 call 1's eight K = 2048 merges (26 picks changed
# against grid 1d2e446b; combine_merges.py) on library b704c710, offline, graph-timed, cold L2,
# beside the seven baselines (session 33's call2.sh); resumed from .carry/grid.duckdb.xz when carried
# (call 4, a smaller BUDGET).
exec bash benchmarks/tuner/h200-2026-11-29-s33/call2.sh
