#!/usr/bin/env bash
# Session 23, device call 4 (issues 15, 17): the offline grid's other 107 configs again. Call 3
# measured them, but ran its tests past the call's limit before its stores were packed, and the
# unpacked store was too large to come back: call 2's store is resumed once more, alone.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz,grid.duckdb.gz}.
set -u
BUDGET=${BUDGET:-200} bash benchmarks/harness/v3/run_device.sh grid
