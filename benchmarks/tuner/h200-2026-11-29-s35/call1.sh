#!/usr/bin/env bash
# Session 35, call 1 (nvidia-h200, one GPU; issue 15): session 34's next_call1.sh as planned there
# (its header lists the prep; library bc2d1a76, the old library 5cb65fc4, the timeline build).
exec bash benchmarks/tuner/h200-2026-11-29-s34/next_call1.sh
