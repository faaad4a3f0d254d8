"""How many files of each kernel set can share a translation unit (importer/harness/build_units.py).

python benchmarks/refset/cpu-2026-11-27/shareable_count.py SET_DIR [SET_DIR ...]
"""

import sys

from cuda_l2_explorer.importer.harness.build_units import shareable
from cuda_l2_explorer.importer.kernelset import scan_set

for folder in sys.argv[1:]:
    scan = scan_set(folder)
    ok = sum(shareable(f.path.read_text()) is not None for f in scan.files)
    print(f"{scan.device}_{scan.accumulator}: {ok} of {len(scan.files)} files can share a unit")
