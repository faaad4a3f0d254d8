"""Import pipelines: published speedup CSVs now; GPU benchmark runs and kernel sets next."""
