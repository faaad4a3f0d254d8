#!/usr/bin/env bash
# The SASS counts NOTES.md gives for v2 (session 40, CPU only): one tiny and one wgmma kernel built
# from the tree and from the tree with v2_library.patch, their fences and cluster barriers counted.
# Needs cuobjdump and nvdisasm (`pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`, on PATH).
#   bash benchmarks/tuner/h100-2026-12-07-s40/v2_sass.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
work=$(mktemp -d)
git worktree add -q "$work/tree" HEAD
trap 'git worktree remove --force "$work/tree"' EXIT
git -C "$work/tree" apply "$PWD/benchmarks/tuner/h100-2026-12-07-s40/v2_library.patch"
pip install -q --no-deps --target "$work/site" "$work/tree"
for which in old new; do
  for spec in "tiny tiny_64x64x64_w2x2_s4_bn" "wgmma wgsk_64x64x64_s8_bn"; do
    set -- $spec
    site=(); [ $which = new ] && site=(env "PYTHONPATH=$work/site")
    "${site[@]}" python -m cuda_l2_explorer.tuner.build --catalog "$1" --only "$2" --out "$work/$which-$2" --jobs 1 >/dev/null
    echo "$which $2: $(cuobjdump -sass "$work/$which-$2"/lib/*.so | grep -oE 'MEMBAR[.A-Z]*|UCGABAR_[A-Z]*|LDL|STL' | sort | uniq -c | tr -s ' \n' ' ')"
  done
done
