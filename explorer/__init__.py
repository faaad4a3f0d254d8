"""cuda-l2-explorer: find, measure and export the fastest HGEMM kernel for an (M, N, K) and a GPU.

This folder is the top of the ``cuda_l2_explorer`` namespace: ``cli`` (the ``cuda-l2-explorer``
command) and ``app`` (the Textual app) present what ``engine`` (lookup, bench, tune, export,
browse and stats services) computes over ``tuner``, ``importer`` and ``db``.
"""
