#!/usr/bin/env bash
# Session 36, call 2 (nvidia-h200, one GPU; issue 15): session 35's next_call2.sh as planned, the
# wide wgmma tiles' search at the 81 mid-size losers, on HEAD's library b704c710 (call 1's spread
# store measured 1.004 < 1.01: not landed). Carried: .whl, .carry (tunerlib = b704c710).
bash benchmarks/tuner/h200-2026-11-29-s35/next_call2.sh
