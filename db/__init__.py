"""DuckDB store: schema and migrations, every read and write, the bundled dataset."""
