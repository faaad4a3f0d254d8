"""Derived TEMP views over the ``all_<table>`` views: speedups in one long table, the audit's
findings, and the reference system's published speedups beside our measurement of its kernels.

``speedups`` has one row per (set, GPU, mode, config, baseline) from either source:
published CSVs (SPEC §5) or measured runs (SPEC §7, unpadded, status ok). Besides the SPEC §6
baselines it carries the derived ``<family>-max`` (the faster layout) and ``best-baseline`` (the
fastest of all seven). Each row names its ``metric``: measured offline rows divide device times
(graph replay), measured server rows isolated-call latencies, and published rows are the
reference system's own ratios (its host timing, metric ``published``). Rows of other metrics
(harness 1/2's issue-bound times) never enter it. ``outcome`` says win / loss / same: for
measured rows a win needs the kernel's p90 below the baseline's p10 (outside the run-to-run
spread), and ``speedup_lo``/``speedup_hi`` bound the ratio by the samples' p10/p90; the published
files carry no spread, so there any ratio above 1.000 counts as a win.
"""

from __future__ import annotations

from cuda_l2_explorer.db.shapes import L2_SPAN_FACTOR, L2_SPAN_FLAG, LEGACY_ROTATION_CAP

BASELINES: tuple[str, ...] = (
    "torch.matmul",
    "cuBLAS-tn",
    "cuBLAS-nn",
    "cuBLASLt-heuristic-tn",
    "cuBLASLt-heuristic-nn",
    "cuBLASLt-auto-tuning-tn",
    "cuBLASLt-auto-tuning-nn",
)
FAMILY_MAX: tuple[str, ...] = ("cuBLAS-max", "cuBLASLt-heuristic-max", "cuBLASLt-auto-tuning-max")
BEST = "best-baseline"
# What the overview, the README headline and `overview` show: the best, torch and each family's max.
HEADLINE_BASELINES: tuple[str, ...] = (BEST, "torch.matmul", *FAMILY_MAX)
# Column order of the SPEC §5 CSVs (after 'mnk').
PUBLISHED_COLUMNS: tuple[str, ...] = (
    "torch.matmul",
    "cuBLAS-tn",
    "cuBLAS-nn",
    "cuBLAS-max",
    "cuBLASLt-heuristic-tn",
    "cuBLASLt-heuristic-nn",
    "cuBLASLt-heuristic-max",
    "cuBLASLt-auto-tuning-tn",
    "cuBLASLt-auto-tuning-nn",
    "cuBLASLt-auto-tuning-max",
)
# Order in which reports list baselines: the headline ones first.
REPORT_ORDER: tuple[str, ...] = (
    BEST,
    "torch.matmul",
    "cuBLAS-max",
    "cuBLASLt-heuristic-max",
    "cuBLASLt-auto-tuning-max",
    "cuBLAS-nn",
    "cuBLAS-tn",
    "cuBLASLt-heuristic-nn",
    "cuBLASLt-heuristic-tn",
    "cuBLASLt-auto-tuning-nn",
    "cuBLASLt-auto-tuning-tn",
)

# The spread of the fastest baseline: ties on the median are broken by name, so the same store
# always gives the same win/loss/same outcome (an unordered pick flipped one config in a thousand).
_BASELINE_LIST = ", ".join(f"'{b}'" for b in BASELINES)

_OUTCOME_PUBLISHED = "CASE WHEN speedup > 1 THEN 'win' WHEN speedup < 1 THEN 'loss' ELSE 'same' END"
# The metric a measured speedup divides, per mode (SPEC §7): offline device time, server the
# isolated call each arrival makes.
HEADLINE_METRIC = {"offline": "device_time", "server": "isolated_call"}
_MODE_METRIC = "CASE r.mode WHEN 'server' THEN 'isolated_call' ELSE 'device_time' END"


def ratio_views(prefix: str, metric_sql: str) -> list[str]:
    """Three views, ``<prefix>_times`` (harness-3 rows of one metric per run: ``metric_sql``, SQL
    over the run ``r``), ``<prefix>_baselines`` (the seven baselines, each family's faster layout
    and the fastest of all) and ``<prefix>_long`` (the kernel's ratio over each, with the
    run-to-run spread's interval and outcome)."""
    return [
        f"""CREATE OR REPLACE TEMP VIEW {prefix}_times AS
        SELECT r.set_id, r.gpu, r.mode, r.run_id, x.m, x.n, x.k, x.implementation, x.padded,
               x.median, x.p10, x.p90, x.metric
        FROM all_measurements x JOIN run_harness r USING (run_id)
        WHERE x.metric = {metric_sql} AND x.status = 'ok' AND r.kind IN ('bench', 'tune')
          -- an older store read without migrating (v5+) still holds harness 1/2 rows so named
          AND coalesce(r.harness, '') NOT IN ('1', '2')""",
        f"""CREATE OR REPLACE TEMP VIEW {prefix}_baselines AS
        SELECT set_id, gpu, mode, run_id, metric, m, n, k, implementation AS baseline, median, p10, p90
        FROM {prefix}_times WHERE implementation IN ({_BASELINE_LIST}) AND NOT padded
        UNION ALL
        SELECT set_id, gpu, mode, run_id, metric, m, n, k,
               regexp_replace(implementation, '-(nn|tn)$', '-max') AS baseline,
               min(median), arg_min(p10, {{'median': median, 'impl': implementation}}),
               arg_min(p90, {{'median': median, 'impl': implementation}})
        FROM {prefix}_times
        WHERE implementation IN ({_BASELINE_LIST}) AND NOT padded
          AND regexp_matches(implementation, '-(nn|tn)$')
        GROUP BY ALL
        UNION ALL
        SELECT set_id, gpu, mode, run_id, metric, m, n, k, '{BEST}',
               min(median), arg_min(p10, {{'median': median, 'impl': implementation}}),
               arg_min(p90, {{'median': median, 'impl': implementation}})
        FROM {prefix}_times WHERE implementation IN ({_BASELINE_LIST}) AND NOT padded
        GROUP BY set_id, gpu, mode, run_id, metric, m, n, k""",
        f"""CREATE OR REPLACE TEMP VIEW {prefix}_long AS
        SELECT b.set_id, b.gpu, b.mode, b.metric, b.m, b.n, b.k, b.baseline,
               b.median / t.median AS speedup, b.p10 / t.p90 AS speedup_lo, b.p90 / t.p10 AS speedup_hi,
               CASE WHEN t.p90 < b.p10 THEN 'win' WHEN t.p10 > b.p90 THEN 'loss' ELSE 'same' END
                   AS outcome,
               b.run_id, t.median AS kernel_s, b.median AS baseline_s
        FROM {prefix}_baselines b JOIN {prefix}_times t
          ON t.run_id = b.run_id AND t.m = b.m AND t.n = b.n AND t.k = b.k
         AND t.metric = b.metric AND t.implementation = 'kernel' AND NOT t.padded""",
    ]


DERIVED_VIEWS: list[str] = [
    f"""CREATE OR REPLACE TEMP VIEW published_long AS
        SELECT p.set_id, s.gpu, p.mode, p.m, p.n, p.k, p.baseline, p.speedup, p.run_id
        FROM all_published_speedups p JOIN all_kernel_sets s USING (set_id)
        UNION ALL
        SELECT p.set_id, s.gpu, p.mode, p.m, p.n, p.k, '{BEST}', min(p.speedup), any_value(p.run_id)
        FROM all_published_speedups p JOIN all_kernel_sets s USING (set_id)
        WHERE p.baseline NOT LIKE '%-max'
        GROUP BY p.set_id, s.gpu, p.mode, p.m, p.n, p.k""",
    # One row per run with its harness version: a bench run's params hold every config's kernel
    # (~1 MB of JSON), so the version is read once per run, never once per measurement row.
    """CREATE OR REPLACE TEMP VIEW run_harness AS
        SELECT run_id, mode, set_id, gpu, kind,
               json_extract_string(params, '$.harness_version') AS harness
        FROM all_runs""",
    *ratio_views("measured", _MODE_METRIC),
    f"""CREATE OR REPLACE TEMP VIEW speedups AS
        SELECT x.set_id, s.name AS set_name, s.accumulator, x.gpu, x.mode, x.m, x.n, x.k,
               x.baseline, x.speedup, {_OUTCOME_PUBLISHED} AS outcome, 'published' AS source,
               x.run_id, NULL::DOUBLE AS kernel_s, NULL::DOUBLE AS baseline_s, 'published' AS metric,
               NULL::DOUBLE AS speedup_lo, NULL::DOUBLE AS speedup_hi, NULL::TEXT AS harness
        FROM published_long x JOIN all_kernel_sets s USING (set_id)
        UNION ALL
        SELECT x.set_id, s.name, s.accumulator, x.gpu, x.mode, x.m, x.n, x.k, x.baseline,
               x.speedup, x.outcome, 'measured', x.run_id, x.kernel_s, x.baseline_s, x.metric,
               x.speedup_lo, x.speedup_hi, r.harness
        FROM measured_long x JOIN all_kernel_sets s USING (set_id) JOIN run_harness r USING (run_id)""",
]

# SPEC §7 cold L2, per config of a cold-labelled measured run: how many times the rotating input
# sets span the L2 (db.shapes.l2_span) and how much of that one call's pass reads and writes (A,
# the layout of B it reads, C). The worker records ``l2_span`` in the config's details; older
# rows are derived from the ``rotation_sets`` and ``bytes_per_set`` they recorded or, lacking
# them, from the rule of the harness that wrote them (protocol.rotation_sets: as many sets as span
# 2x the L2, at most LEGACY_ROTATION_CAP; the free memory, unknown here, binds only for sets of
# gigabytes). Every run since the cap was raised records its set count.
# ``findings``: the audit's findings, plus L2_SPAN_FLAG on each config spanning less than 2x (for
# every implementation: they share the inputs); the browse table and the kernel view show them.
_SET_BYTES = "2 * (c.m * c.k + 2 * c.k * c.n + c.m * c.n)"
_CALL_BYTES = "2 * (c.m * c.k + c.k * c.n + c.m * c.n)"
FINDINGS_VIEWS: list[str] = [
    f"""CREATE OR REPLACE TEMP VIEW l2_span AS
        WITH cold AS (
            SELECT run_id, l2_bytes FROM all_runs
            WHERE kind IN ('bench', 'tune') AND l2_bytes > 0
              AND coalesce(json_extract_string(params, '$.l2'), 'cold') = 'cold'
        ),
        configs AS (
            SELECT c.run_id, c.m, c.n, c.k, r.l2_bytes, {_CALL_BYTES} AS call_bytes,
                   TRY_CAST(json_extract_string(c.details, '$.l2_span') AS DOUBLE) AS recorded,
                   TRY_CAST(json_extract_string(c.details, '$.rotation_sets') AS INTEGER) AS sets,
                   coalesce(TRY_CAST(json_extract_string(c.details, '$.bytes_per_set') AS BIGINT),
                            {_SET_BYTES}) AS set_bytes,
                   least({LEGACY_ROTATION_CAP}, greatest(2, ceil({L2_SPAN_FACTOR} * r.l2_bytes / set_bytes)))
                       ::INTEGER AS rule_sets
            FROM all_run_configs c JOIN cold r USING (run_id)
        )
        SELECT run_id, m, n, k, l2_bytes, set_bytes, call_bytes, sets IS NULL AS derived,
               coalesce(sets, rule_sets) AS rotation_sets,
               coalesce(recorded, coalesce(sets, rule_sets) * set_bytes / l2_bytes) AS l2_span
        FROM configs""",
    f"""CREATE OR REPLACE TEMP VIEW findings AS
        SELECT run_id, m, n, k, implementation, finding, detail FROM all_audit_findings
        UNION ALL
        SELECT run_id, m, n, k, 'all', '{L2_SPAN_FLAG}',
               printf('the %d rotating input sets span %.2fx the L2 (%.1f of %.0f MiB; a call''s pass '
                      || 'over them reads and writes %.1f MiB); cold L2 wants {L2_SPAN_FACTOR:g}x%s',
                      rotation_sets, l2_span, l2_span * l2_bytes / 1048576, l2_bytes / 1048576,
                      rotation_sets * call_bytes / 1048576,
                      CASE WHEN derived THEN ' (set count from the harness rule, not recorded)' ELSE '' END)
        FROM l2_span WHERE l2_span < {L2_SPAN_FACTOR}""",
]

# Findings about how a config was measured rather than about the launcher: the L2 span (shared by
# every implementation of the config) and graph replay vs CUPTI. ``published_vs_measured`` shows
# them apart from the audit's findings on the kernel (sync, allocation, streams, accumulation).
MEASUREMENT_CAVEATS: tuple[str, ...] = (L2_SPAN_FLAG, "timing-mismatch")
_CAVEAT_LIST = ", ".join(f"'{c}'" for c in MEASUREMENT_CAVEATS)

# Issue 17, SPEC §5 beside §7: per (set, GPU, mode, config, baseline) of a set that is both
# published and measured on the same GPU label and mode, the published ratio (the reference
# system's host-timed figure) beside our measurement of the same kernel in the newest harness-3
# run that measured the config: its ratio and outcome from ``speedups`` (the same metric per mode
# and the same win/loss/same spread rule as the stats), its ratio over the best baseline, the
# kernel's correctness status (the worst of its rows), the audit's findings on it, and the
# reference system's own metric (mean 2MNK / host time, SPEC §7) as a ratio over the same
# baseline. A kernel that was incorrect or crashed has no measured ratio here, and so no
# ``metric`` (NULL: no figure of ours to name a metric for); one that could not be captured in a
# graph has its isolated-call ratio instead, with ``metric`` saying so (the view never divides one
# metric by another); status and findings say why. ``verdict`` sets the measured outcome against
# the published one (a published ratio above 1 is a claimed win).
_REFERENCE_TFLOPS = (
    "SELECT run_id, m, n, k, implementation, mean FROM all_measurements "
    "WHERE metric = 'reference_tflops' AND status = 'ok' AND NOT padded"
)
_REPORT_LIST = ", ".join(f"'{b}'" for b in REPORT_ORDER)
# A kernel that could not be captured in a graph (the reference system's launch on the legacy
# default stream) has no device time; its ratio in the comparison is the isolated call's (one call
# between events on an idle GPU, the same metric for the kernel and every baseline), labelled.
FINDINGS_VIEWS += ratio_views("isolated", "'isolated_call'")
FINDINGS_VIEWS.append(
    f"""CREATE OR REPLACE TEMP VIEW published_vs_measured AS
        WITH runs3 AS (
            SELECT run_id, set_id, gpu, mode, started_at FROM all_runs
            WHERE kind IN ('bench', 'tune')
              AND coalesce(json_extract_string(params, '$.harness_version'), '') NOT IN ('1', '2')
        ),
        latest AS (
            SELECT r.set_id, r.gpu, r.mode, x.m, x.n, x.k,
                   arg_max(x.run_id, {{'at': r.started_at, 'run': x.run_id}}) AS run_id
            FROM all_measurements x JOIN runs3 r USING (run_id)
            WHERE x.implementation = 'kernel' AND NOT x.padded
            GROUP BY ALL
        ),
        kernel AS (
            SELECT l.set_id, l.gpu, l.mode, l.m, l.n, l.k, l.run_id,
                   arg_min(x.status, x.status = 'ok') AS status, max(x.error_ratio) AS error_ratio,
                   max(x.mean) FILTER (WHERE x.metric = 'reference_tflops' AND x.status = 'ok')
                       AS reference_tflops
            FROM latest l JOIN all_measurements x
              ON x.run_id = l.run_id AND x.m = l.m AND x.n = l.n AND x.k = l.k
             AND x.implementation = 'kernel' AND NOT x.padded
            GROUP BY ALL
        ),
        reference AS (
            SELECT run_id, m, n, k, implementation AS baseline, mean AS tflops
            FROM ({_REFERENCE_TFLOPS}) WHERE implementation IN ({_BASELINE_LIST})
            UNION ALL
            SELECT run_id, m, n, k, regexp_replace(implementation, '-(nn|tn)$', '-max'), max(mean)
            FROM ({_REFERENCE_TFLOPS})
            WHERE implementation IN ({_BASELINE_LIST}) AND regexp_matches(implementation, '-(nn|tn)$')
            GROUP BY ALL
            UNION ALL
            SELECT run_id, m, n, k, '{BEST}', max(mean)
            FROM ({_REFERENCE_TFLOPS}) WHERE implementation IN ({_BASELINE_LIST})
            GROUP BY run_id, m, n, k
        ),
        flags AS (
            SELECT f.run_id, f.m, f.n, f.k,
                   string_agg(DISTINCT f.finding, ',' ORDER BY f.finding)
                       FILTER (WHERE f.finding NOT IN ({_CAVEAT_LIST})) AS audit,
                   string_agg(DISTINCT f.finding, ',' ORDER BY f.finding)
                       FILTER (WHERE f.finding IN ({_CAVEAT_LIST})) AS caveats
            FROM findings f WHERE f.implementation IN ('kernel', 'all')
            GROUP BY ALL
        ),
        measured AS (SELECT * FROM speedups WHERE source = 'measured'),
        -- the mode's own metric where the kernel has it, else (not capturable) the isolated call
        ratio AS (
            SELECT kn.run_id, kn.m, kn.n, kn.k, b.baseline,
                   coalesce(sp.speedup, iso.speedup) AS speedup,
                   coalesce(sp.speedup_lo, iso.speedup_lo) AS speedup_lo,
                   coalesce(sp.speedup_hi, iso.speedup_hi) AS speedup_hi,
                   coalesce(sp.outcome, iso.outcome) AS outcome, coalesce(sp.metric, iso.metric) AS metric
            FROM kernel kn
            CROSS JOIN (SELECT unnest([{_REPORT_LIST}]) AS baseline) b
            LEFT JOIN measured sp ON sp.run_id = kn.run_id AND sp.m = kn.m AND sp.n = kn.n
             AND sp.k = kn.k AND sp.baseline = b.baseline
            LEFT JOIN isolated_long iso ON sp.speedup IS NULL AND iso.run_id = kn.run_id
             AND iso.m = kn.m AND iso.n = kn.n AND iso.k = kn.k AND iso.baseline = b.baseline
        )
        SELECT p.set_id, p.gpu, p.mode, p.m, p.n, p.k, p.baseline,
               p.speedup AS published, sp.speedup AS measured, sp.speedup_lo AS measured_lo,
               sp.speedup_hi AS measured_hi, sp.outcome, best.speedup AS measured_best,
               best.outcome AS outcome_best,
               CASE WHEN sp.speedup IS NULL THEN NULL
                    WHEN sp.outcome = 'same' THEN 'same'
                    WHEN p.speedup > 1 AND sp.outcome = 'loss' THEN 'contradicted'
                    WHEN p.speedup > 1 THEN 'confirmed'
                    WHEN sp.outcome = 'loss' THEN 'no-win-either'
                    ELSE 'measured-win-only' END AS verdict,
               sp.metric AS metric,  -- NULL with no measured ratio: there is no metric to name
               kn.status, kn.error_ratio, coalesce(fl.audit, '') AS audit,
               coalesce(fl.caveats, '') AS caveats,
               kn.reference_tflops, kn.reference_tflops / ref.tflops AS reference_speedup, kn.run_id
        FROM published_long p
        JOIN kernel kn ON kn.set_id = p.set_id AND kn.gpu = p.gpu AND kn.mode = p.mode
         AND kn.m = p.m AND kn.n = p.n AND kn.k = p.k
        LEFT JOIN ratio sp ON sp.run_id = kn.run_id AND sp.m = p.m AND sp.n = p.n AND sp.k = p.k
         AND sp.baseline = p.baseline
        LEFT JOIN ratio best ON best.run_id = kn.run_id AND best.m = p.m AND best.n = p.n
         AND best.k = p.k AND best.baseline = '{BEST}'
        LEFT JOIN reference ref ON ref.run_id = kn.run_id AND ref.m = p.m AND ref.n = p.n
         AND ref.k = p.k AND ref.baseline = p.baseline
        LEFT JOIN flags fl ON fl.run_id = kn.run_id AND fl.m = p.m AND fl.n = p.n AND fl.k = p.k"""
)
