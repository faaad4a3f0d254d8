"""Our HGEMM kernel library and its search engine.

Kernel families and what each supports (families.py) with their compile-time configs (catalog.py
for CUTLASS SM90, tiny.py for our tiny-shape kernels); their CUDA sources (cutlass/, tuner/csrc/)
rendered through one templating mechanism (templates.py) behind one C ABI (abi.py, emit.py);
builds into a C-ABI shared library (build.py) loaded with ctypes (native.py); the per-shape search
(search_space.py, search.py, search_worker.py); manifests of the kept kernels (manifest.py) and their
SPEC section 4 files (materialize.py).
"""
