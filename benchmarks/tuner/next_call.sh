#!/usr/bin/env bash
# The next device call of issue 15's plan, whichever GPU the lease gives: a call for `nvidia-h200`
# may run on an H100 (sessions 38-40's did), and an H100 set's figures must come from an H100, an
# H200 set's from an H200. Runs the plan NOTES.md names for the GPU that came:
#   run(command="bash benchmarks/tuner/next_call.sh", carry=[".whl", ".carry"])
# after `bash benchmarks/device_carry.sh lib` and `bash benchmarks/device_trim.sh out`.
# PLAN=v4 (the default; session 41's plan.sh, its `v4` step, either GPU: library v4's GPU tests
# and its A/B against dc427318; plan.sh's header says how to build both and keep v4's patch applied
# while the calls run; its later steps: deep, large, grid, resume); PLAN=v2 (session 40's v2 alone,
# which needs its own set-up); PLAN=gpu: the GPU's own next step (H100:
# session 40's call.sh part3, the large configs' re-search, then `call.sh grid` and `call.sh
# resume`; H200: session 38's next_call1.sh, the stream rows and the GPU tests there).
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "next_call.sh on: $gpu"
plan=${PLAN:-v4}
[ "$plan" = v2 ] && exec bash benchmarks/tuner/h100-2026-12-07-s40/v2_call.sh
[ "$plan" = v4 ] && exec bash benchmarks/tuner/h100-2026-12-08-s41/plan.sh v4
case "$gpu" in
*H200*) exec bash benchmarks/tuner/h200-2026-12-07-s38/next_call1.sh ;;
*H100*) exec bash benchmarks/tuner/h100-2026-12-07-s40/call.sh part3 ;;
*) echo "no plan for $gpu" >&2; exit 2 ;;
esac
