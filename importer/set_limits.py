"""How much a kernel-set download may take (remote_set.py): constants only, no imports, so that the
CLI's parser (built for every command) can show them without loading the importer."""

DEFAULT_MAX_DOWNLOAD = 256 << 20  # the reference repository's tarball is far below this
DEFAULT_DOWNLOAD_TIMEOUT_S = 300.0  # one attempt: a repository's tarball, not a CSV
