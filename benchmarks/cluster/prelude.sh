# Sourced by the cluster calls (h100_cluster_vs_direct.sh, two_gpus.sh) after OUT is set: our
# library built (run_device.sh build, its log under $OUT/setup), the carried Dask wheels installed,
# the environment, and $lib, the built library.
OUT=$OUT/setup bash benchmarks/harness/v3/run_device.sh build
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-cluster .whl-cluster/*.whl || exit 1
export PYTHONPATH=/tmp/site:/tmp/site-cluster PYTHONUNBUFFERED=1
export CUDA_L2_EXPLORER_BUILD_CACHE=/tmp/l2x-build CUDA_L2_EXPLORER_NATIVE_CACHE=/tmp/l2x-native
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
