"""The engine: the services both front ends (the CLI and the Textual app) call.

- ``browse``: the store's kernel sets, runs, aggregate speedups, a set's configs and a kernel's
  detail, as the CLI prints them and the app's panes show them;
- ``lookup``: SPEC section 8, the ranked answer for any (M, N, K) with its evidence;
- ``bench``: a benchmark request (a kernel set, shapes, protocol settings) run by the harness;
- ``tune``: the per-shape kernel search, its manifest and the measurement of what it kept;
- ``library``: our kernel library as a set (manifest entries as harness kernels, the store's record);
- ``export``: a chosen kernel written into a user's project (SPEC section 9).

It sits above ``tuner``, ``importer`` and ``db`` and below ``cli`` and ``app``: it never imports
Textual, and reports progress through the callbacks in ``feedback``. Submodules are imported on
use: the GPU machine runs ``bench`` without polars.
"""
