#!/usr/bin/env bash
# Session 36, call 2 (nvidia-h200, one GPU; issue 15): session 35's next_call2.sh as planned, the
# wide wgmma tiles' search at the 81 mid-size losers, on HEAD's library b704c710 (call 1's spread
# store measured 1.004 < 1.01: not landed). Carried: .whl, .carry (tunerlib = b704c710).
bash benchmarks/tuner/h200-2026-11-29-s35/next_call2.sh
# Then the wgmma family's GPU tests again with the residency bounds (call 1's four failures: the
# 128x96 sliced kernel holds one CTA an SM, by its registers, where the test counted shared memory).
CUDA_L2_EXPLORER_TUNER_LIB=$(ls -t /tmp/tb/lib/*.so | head -1) PYTHONPATH=/tmp/site timeout 90 \
  python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_tuner_own.py -k wgsk >"$OUT/gpu_tests_wgsk.log" 2>&1
echo "wgsk gpu tests: exit $? $(tail -1 "$OUT/gpu_tests_wgsk.log")"
