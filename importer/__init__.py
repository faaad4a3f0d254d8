"""Measurements and imports into the store: the GPU benchmark harness (``harness``), published
speedup CSVs (``published``, fetched by ``fetch``), kernel-set scanning (``kernelset``) and the
bundled dataset's build (``bundle``)."""
