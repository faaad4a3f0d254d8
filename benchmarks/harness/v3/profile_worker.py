"""The harness's worker process under cProfile, to see where a config's time goes on the host.

    PROFILE_OUT=worker.prof CUDA_L2_EXPLORER_WORKER=benchmarks/harness/v3/profile_worker.py \
        cuda-l2-explorer bench ...
    python -c 'import pstats; pstats.Stats("worker.prof").sort_stats("cumulative").print_stats(50)'

The bench command starts every worker through this script (CUDA_L2_EXPLORER_WORKER), naming the
worker module it would have run (our library's kernels need the tuner's worker). The profile is
written when the worker leaves, after its last config; a worker restarted after a crash writes
over the earlier one's profile.
"""

import cProfile
import os
import runpy
import sys

profile = cProfile.Profile()
profile.enable()
try:
    runpy.run_module(sys.argv[1], run_name="__main__", alter_sys=True)
except SystemExit as leaving:
    code = leaving.code
else:
    code = 0
finally:
    profile.disable()
    profile.dump_stats(os.environ.get("PROFILE_OUT", "worker.prof"))
sys.exit(code)
