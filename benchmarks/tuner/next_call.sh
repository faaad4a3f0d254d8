#!/usr/bin/env bash
# The next device call of issue 15's plan, whichever GPU the lease gives: a call for `nvidia-h200`
# may run on an H100 (session 38's did), and an H100 set's figures must come from an H100, an H200
# set's from an H200. Runs the plan NOTES.md names for the GPU that came:
#   run(command="bash benchmarks/tuner/next_call.sh", carry=[".whl", ".carry"])
# after `bash benchmarks/device_carry.sh lib` and `bash benchmarks/device_trim.sh out`.
# (Session 39's producer A/B ran first on the H100 and landed: PLAN=producer runs it again,
# gpu-2026-12-07-s39/producer_call.sh, for the H200's set.)
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "next_call.sh on: $gpu"
[ "${PLAN:-gpu}" = producer ] && exec bash benchmarks/tuner/gpu-2026-12-07-s39/producer_call.sh
case "$gpu" in
*H200*) exec bash benchmarks/tuner/h200-2026-12-07-s38/next_call1.sh ;;
*H100*) exec bash benchmarks/tuner/h100-2026-12-07-s38/next_h100_research.sh 2 ;;  # then 3, then the grid (NOTES)
*) echo "no plan for $gpu" >&2; exit 2 ;;
esac
