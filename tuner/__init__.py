"""The kernel search engine (issue 4): kernels as data, emission, catalog builds, measurement."""
