#!/usr/bin/env bash
# The project's wheel for device calls, without the bundled Parquet dataset (every device step runs
# with --no-bundled, and the carry limit is 64 MiB): .whl/cuda_l2_explorer-*.whl, from the checkout.
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -f .whl/cuda_l2_explorer-*.whl
.venv/bin/pip wheel -q --no-deps -w .whl . && rm -rf build
wheel=$(ls .whl/cuda_l2_explorer-*.whl)
tmp=$(mktemp -d)
(cd "$tmp" && unzip -q "$OLDPWD/$wheel" && rm -f cuda_l2_explorer/db/bundled/*.parquet &&
  sed -i '/db\/bundled\/.*\.parquet/d' cuda_l2_explorer-*.dist-info/RECORD && rm "$OLDPWD/$wheel" && zip -qr "$OLDPWD/$wheel" .)
rm -rf "$tmp"
ls -la "$wheel"
