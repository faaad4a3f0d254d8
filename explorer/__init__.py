"""cuda-l2-explorer: the CLI (and, later, the Textual app) over the engine in ``db``/``importer``."""
