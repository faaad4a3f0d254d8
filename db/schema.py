"""Schema of the store as an ordered list of forward migrations.

A store records the highest version applied in ``schema_info``. Opening a store applies the
missing migrations in one transaction; a store from a newer version is refused, never guessed at.
Never edit a released migration: append a new one.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (
        1,
        "initial schema",
        [
            """CREATE TABLE schema_info (
                version INTEGER NOT NULL,
                description TEXT NOT NULL,
                applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
                tool_version TEXT NOT NULL
            )""",
            # One row per GPU label ('h100', 'a100', '3090'...). Hardware facts are filled by
            # measured runs; published imports know only the label.
            """CREATE TABLE gpus (
                gpu TEXT PRIMARY KEY,
                name TEXT,
                sm_count INTEGER,
                l2_bytes BIGINT,
                memory_bytes BIGINT
            )""",
            # A kernel set: one directory of the SPEC §4 layout, ours or another system's.
            """CREATE TABLE kernel_sets (
                set_id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                gpu TEXT NOT NULL,
                accumulator TEXT NOT NULL
                    CHECK (accumulator IN ('F32F16F16F32', 'F16F16F16F16')),
                origin TEXT NOT NULL CHECK (origin IN ('published', 'imported', 'ours')),
                root TEXT,
                description TEXT,
                created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
            )""",
            """CREATE TABLE kernels (
                kernel_id TEXT PRIMARY KEY,
                set_id TEXT NOT NULL,
                m BIGINT NOT NULL CHECK (m > 0),
                n BIGINT NOT NULL CHECK (n > 0),
                k BIGINT NOT NULL CHECK (k > 0),
                path TEXT,
                source_sha256 TEXT,
                source TEXT,
                pad_bm INTEGER,
                pad_bn INTEGER,
                pad_bk INTEGER,
                runtime_shapes BOOLEAN NOT NULL DEFAULT false,
                family TEXT,
                params JSON,
                UNIQUE (set_id, m, n, k)
            )""",
            # A run: one import of a published file or one benchmark, with its provenance.
            """CREATE TABLE runs (
                run_id TEXT PRIMARY KEY,
                kind TEXT NOT NULL CHECK (kind IN ('published', 'bench', 'tune')),
                set_id TEXT,
                gpu TEXT NOT NULL,
                mode TEXT CHECK (mode IN ('offline', 'server')),
                status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted')),
                started_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
                finished_at TIMESTAMP,
                tool_version TEXT NOT NULL,
                command_line TEXT,
                source TEXT,
                source_sha256 TEXT,
                gpu_name TEXT,
                sm_count INTEGER,
                l2_bytes BIGINT,
                clock_start_mhz INTEGER,
                clock_end_mhz INTEGER,
                driver TEXT,
                cuda TEXT,
                cublas TEXT,
                torch TEXT,
                cutlass TEXT,
                params JSON
            )""",
            # One statistic set per (config, implementation, metric) of a run. implementation
            # is 'kernel' for the set's kernel or a SPEC §6 baseline name ('cuBLAS-nn', ...).
            """CREATE TABLE measurements (
                run_id TEXT NOT NULL,
                m BIGINT NOT NULL CHECK (m > 0),
                n BIGINT NOT NULL CHECK (n > 0),
                k BIGINT NOT NULL CHECK (k > 0),
                implementation TEXT NOT NULL,
                metric TEXT NOT NULL
                    CHECK (metric IN ('device_time', 'host_latency', 'reference_tflops')),
                padded BOOLEAN NOT NULL DEFAULT false,
                l2 TEXT NOT NULL DEFAULT 'cold' CHECK (l2 IN ('cold', 'warm')),
                unit TEXT NOT NULL,
                n_samples INTEGER,
                calls_per_sample INTEGER,
                median DOUBLE,
                p10 DOUBLE,
                p90 DOUBLE,
                mean DOUBLE,
                p99 DOUBLE,
                min DOUBLE,
                max DOUBLE,
                status TEXT NOT NULL
                    CHECK (status IN ('ok', 'incorrect', 'crashed', 'timeout', 'compile_error',
                                      'skipped')),
                rel_error DOUBLE,
                error_ratio DOUBLE,
                message TEXT,
                PRIMARY KEY (run_id, m, n, k, implementation, metric, padded)
            )""",
            """CREATE TABLE samples (
                run_id TEXT NOT NULL,
                m BIGINT NOT NULL,
                n BIGINT NOT NULL,
                k BIGINT NOT NULL,
                implementation TEXT NOT NULL,
                metric TEXT NOT NULL,
                padded BOOLEAN NOT NULL DEFAULT false,
                idx INTEGER NOT NULL,
                value DOUBLE NOT NULL,
                PRIMARY KEY (run_id, m, n, k, implementation, metric, padded, idx)
            )""",
            """CREATE TABLE audit_findings (
                run_id TEXT NOT NULL,
                m BIGINT NOT NULL,
                n BIGINT NOT NULL,
                k BIGINT NOT NULL,
                implementation TEXT NOT NULL,
                finding TEXT NOT NULL,
                detail TEXT,
                PRIMARY KEY (run_id, m, n, k, implementation, finding)
            )""",
            # SPEC §5: the reference system's published speedups (baseline time / kernel time).
            """CREATE TABLE published_speedups (
                run_id TEXT NOT NULL,
                set_id TEXT NOT NULL,
                mode TEXT NOT NULL CHECK (mode IN ('offline', 'server')),
                m BIGINT NOT NULL CHECK (m > 0),
                n BIGINT NOT NULL CHECK (n > 0),
                k BIGINT NOT NULL CHECK (k > 0),
                baseline TEXT NOT NULL,
                speedup DOUBLE NOT NULL CHECK (speedup > 0),
                PRIMARY KEY (set_id, mode, m, n, k, baseline)
            )""",
        ],
    ),
]

MIGRATIONS.append(
    (
        2,
        "benchmark runs: per-config bookkeeping for resume, kernel build results",
        [
            # One row per finished config of a run, written in the same transaction as its
            # measurements: a config with a row here is never measured again on --resume.
            """CREATE TABLE run_configs (
                run_id TEXT NOT NULL,
                m BIGINT NOT NULL,
                n BIGINT NOT NULL,
                k BIGINT NOT NULL,
                status TEXT NOT NULL
                    CHECK (status IN ('done', 'crashed', 'timeout', 'compile_error', 'error')),
                gpu_index INTEGER,
                seconds DOUBLE,
                message TEXT,
                finished_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
                details JSON,
                PRIMARY KEY (run_id, m, n, k)
            )""",
            "ALTER TABLE kernels ADD COLUMN build_status TEXT",
            "ALTER TABLE kernels ADD COLUMN build_log TEXT",
        ],
    )
)

MIGRATIONS.append(
    (
        3,
        "kernel search log: every candidate the per-shape search measured",
        [
            # One row per candidate and stage of a tune run (stage 0: pruned before measuring,
            # 1: brief measurement, 2: finalists re-measured beside cuBLASLt's heuristic choice,
            # which is logged too with family 'baseline'). `chosen` marks the kept kernel.
            """CREATE TABLE search_log (
                run_id TEXT NOT NULL,
                m BIGINT NOT NULL,
                n BIGINT NOT NULL,
                k BIGINT NOT NULL,
                candidate TEXT NOT NULL,
                stage INTEGER NOT NULL,
                kernel TEXT NOT NULL,
                family TEXT,
                params JSON,
                variant JSON,
                status TEXT NOT NULL,
                predicted_us DOUBLE,
                median DOUBLE,
                p10 DOUBLE,
                p90 DOUBLE,
                n_samples INTEGER,
                calls_per_sample INTEGER,
                rel_error DOUBLE,
                error_ratio DOUBLE,
                chosen BOOLEAN NOT NULL DEFAULT false,
                message TEXT,
                PRIMARY KEY (run_id, m, n, k, candidate, stage)
            )""",
        ],
    )
)

# SPEC §7: what a measurement's figure is. Harness 3 (offline) times ``device_time`` by CUDA-graph
# replay; ``issue_bound_time`` is R calls issued from Python between two events (how harnesses 1
# and 2 timed offline, and the fallback for launchers a graph cannot capture); ``isolated_call``
# is one call between events on an idle GPU; ``cupti_kernel_time`` is the summed duration of
# the GPU work one call launched, per CUPTI. No figure is ever divided by one of another metric.
METRICS: tuple[str, ...] = (
    "device_time",
    "issue_bound_time",
    "isolated_call",
    "host_latency",
    "cupti_kernel_time",
    "reference_tflops",
)
_METRIC_LIST = ", ".join(f"'{m}'" for m in METRICS)

MIGRATIONS.append(
    (
        4,
        "harness 3 metrics: graph-replayed device time, issue-bound time, isolated call, CUPTI time",
        [
            # DuckDB cannot alter a CHECK constraint: the table is rebuilt with the wider one.
            f"""CREATE TABLE measurements_v4 (
                run_id TEXT NOT NULL,
                m BIGINT NOT NULL CHECK (m > 0),
                n BIGINT NOT NULL CHECK (n > 0),
                k BIGINT NOT NULL CHECK (k > 0),
                implementation TEXT NOT NULL,
                metric TEXT NOT NULL CHECK (metric IN ({_METRIC_LIST})),
                padded BOOLEAN NOT NULL DEFAULT false,
                l2 TEXT NOT NULL DEFAULT 'cold' CHECK (l2 IN ('cold', 'warm')),
                unit TEXT NOT NULL,
                n_samples INTEGER,
                calls_per_sample INTEGER,
                median DOUBLE,
                p10 DOUBLE,
                p90 DOUBLE,
                mean DOUBLE,
                p99 DOUBLE,
                min DOUBLE,
                max DOUBLE,
                status TEXT NOT NULL
                    CHECK (status IN ('ok', 'incorrect', 'crashed', 'timeout', 'compile_error',
                                      'skipped')),
                rel_error DOUBLE,
                error_ratio DOUBLE,
                message TEXT,
                PRIMARY KEY (run_id, m, n, k, implementation, metric, padded)
            )""",
            "INSERT INTO measurements_v4 SELECT * FROM measurements",
            "DROP TABLE measurements",
            "ALTER TABLE measurements_v4 RENAME TO measurements",
        ],
    )
)

# Harnesses 1 and 2 timed offline "device time" as R calls issued from Python between two events,
# and server mode as one host-issued call between events: both include Python's issue cost, so
# their rows are issue-bound times (SPEC §7), never device time. Harness 3 rows keep their names.
_ISSUE_BOUND_RUNS = """SELECT run_id FROM runs WHERE kind IN ('bench', 'tune')
    AND json_extract_string(params, '$.harness_version') IN ('1', '2')"""
MIGRATIONS.append(
    (
        5,
        "harness 1/2 rows relabelled: their device_time was issue-bound time",
        [
            f"UPDATE {table} SET metric = 'issue_bound_time' "
            f"WHERE metric = 'device_time' AND run_id IN ({_ISSUE_BOUND_RUNS})"
            for table in ("samples", "measurements")
        ],
    )
)

MIGRATIONS.append(
    (
        6,
        "published speedups without a primary-key index (bulk imports of a million configs)",
        [
            # The (set, mode, m, n, k, baseline) index cost 140 bytes a row: a 1M-config file
            # (10M rows) took 15 s and 3 GB to insert and 1.4 GB on disk. The importer already
            # guarantees the key (a file's shapes are unique; a (set, mode) is deleted before it
            # is written again) and merges refuse a (set, mode) the store holds. DuckDB cannot
            # drop a constraint: the table is rebuilt without it.
            """CREATE TABLE published_speedups_v6 (
                run_id TEXT NOT NULL,
                set_id TEXT NOT NULL,
                mode TEXT NOT NULL CHECK (mode IN ('offline', 'server')),
                m BIGINT NOT NULL CHECK (m > 0),
                n BIGINT NOT NULL CHECK (n > 0),
                k BIGINT NOT NULL CHECK (k > 0),
                baseline TEXT NOT NULL,
                speedup DOUBLE NOT NULL CHECK (speedup > 0)
            )""",
            "INSERT INTO published_speedups_v6 SELECT * FROM published_speedups",
            "DROP TABLE published_speedups",
            "ALTER TABLE published_speedups_v6 RENAME TO published_speedups",
        ],
    )
)

SCHEMA_VERSION = MIGRATIONS[-1][0]

# Tables whose rows the bundled dataset carries, in dependency order.
DATA_TABLES: tuple[str, ...] = (
    "gpus",
    "kernel_sets",
    "kernels",
    "runs",
    "measurements",
    "samples",
    "audit_findings",
    "published_speedups",
    "run_configs",
    "search_log",
)
