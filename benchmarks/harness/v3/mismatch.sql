-- Over the bundled dataset (db/bundled), from the repository root. One row per (config,
-- implementation) of the harness-3 grid run: graph-replayed device time, CUPTI's kernel time
-- (summed GPU operations of one eager call, after the timing), the timing-mismatch flag.
CREATE VIEW runs AS SELECT * FROM 'db/bundled/runs.parquet';
CREATE VIEW meas AS SELECT * FROM 'db/bundled/measurements.parquet';
CREATE VIEW flags AS SELECT * FROM 'db/bundled/audit_findings.parquet' WHERE finding = 'timing-mismatch';
CREATE VIEW h3 AS SELECT run_id FROM runs
    WHERE kind = 'bench' AND json_extract_string(params, '$.harness_version') = '3';
CREATE VIEW x AS
SELECT d.m, d.n, d.k, d.implementation AS impl, d.median * 1e6 AS graph_us, c.median * 1e6 AS cupti_us,
       d.median / c.median AS ratio, (d.median - c.median) * 1e6 AS gap_us, f.detail IS NOT NULL AS flagged,
       -- db.shapes.regime on the H100 (989 TFLOP/s, 3.35 TB/s)
       CASE WHEN greatest(2.0 * d.m * d.n * d.k / 989e12, 2.0 * (d.m * d.k + d.k * d.n + d.m * d.n) / 3.35e12) < 5e-6
            THEN 'tiny'
            WHEN 2.0 * (d.m * d.k + d.k * d.n + d.m * d.n) / 3.35e12 >= 2.0 * d.m * d.n * d.k / 989e12
            THEN CASE WHEN d.k <= least(d.m, d.n) THEN 'small-K' ELSE 'skinny' END
            ELSE 'large' END AS regime
FROM meas d JOIN h3 USING (run_id)
JOIN meas c ON c.run_id = d.run_id AND c.metric = 'cupti_kernel_time'
           AND (c.m, c.n, c.k, c.implementation, c.padded) = (d.m, d.n, d.k, d.implementation, d.padded)
LEFT JOIN flags f ON f.run_id = d.run_id AND (f.m, f.n, f.k, f.implementation) = (d.m, d.n, d.k, d.implementation)
WHERE d.metric = 'device_time' AND d.status = 'ok' AND NOT d.padded;

-- 1. by regime: how many rows are flagged, and which way graph and CUPTI disagree
SELECT regime, count(*) AS rows, sum(flagged::INT) AS flagged, round(avg(flagged::INT), 3) AS share,
       count(*) FILTER (WHERE flagged AND ratio > 1) AS graph_slower,
       round(median(ratio) FILTER (WHERE flagged AND ratio > 1), 3) AS slower_ratio,
       round(median(gap_us) FILTER (WHERE flagged AND ratio > 1), 2) AS slower_gap_us,
       count(*) FILTER (WHERE flagged AND ratio < 1) AS graph_faster,
       round(median(ratio) FILTER (WHERE flagged AND ratio < 1), 3) AS faster_ratio,
       round(median(graph_us), 1) AS median_graph_us
FROM x GROUP BY regime ORDER BY list_position(['tiny', 'skinny', 'small-K', 'large'], regime);

-- 2. by implementation, all configs and tiny ones (median graph and CUPTI us, gap)
SELECT impl, round(avg(flagged::INT), 3) AS share_all,
       round(avg(flagged::INT) FILTER (WHERE regime = 'tiny'), 3) AS share_tiny,
       round(median(graph_us) FILTER (WHERE regime = 'tiny'), 2) AS tiny_graph_us,
       round(median(cupti_us) FILTER (WHERE regime = 'tiny'), 2) AS tiny_cupti_us,
       round(median(gap_us) FILTER (WHERE regime = 'tiny'), 2) AS tiny_gap_us
FROM x GROUP BY impl ORDER BY share_all DESC;

-- 3. tiny: the graph's excess over CUPTI (us a call), flagged or not, and what a wider
--    per-call allowance (5% plus 1.0 or 1.5 us instead of 0.5 us a kernel) would leave flagged
SELECT flagged, count(*) AS rows, round(quantile_cont(gap_us, 0.1), 2) AS p10,
       round(median(gap_us), 2) AS p50, round(quantile_cont(gap_us, 0.9), 2) AS p90,
       count(*) FILTER (WHERE gap_us > 0.05 * cupti_us + 1.0) AS over_1us,
       count(*) FILTER (WHERE gap_us > 0.05 * cupti_us + 1.5) AS over_1_5us
FROM x WHERE regime = 'tiny' GROUP BY flagged ORDER BY flagged;

-- 4. does it move the headline? our kernel over the best of the seven, geomean, by device time
--    and by CUPTI kernel time (both per implementation's own figure, never mixed)
WITH best AS (
    SELECT m, n, k, any_value(regime) AS regime,
           min(graph_us) FILTER (WHERE impl <> 'kernel') AS base_graph,
           min(cupti_us) FILTER (WHERE impl <> 'kernel') AS base_cupti,
           max(graph_us) FILTER (WHERE impl = 'kernel') AS ours_graph,
           max(cupti_us) FILTER (WHERE impl = 'kernel') AS ours_cupti
    FROM x GROUP BY m, n, k
)
SELECT coalesce(regime, 'all') AS regime, count(*) AS configs,
       round(exp(avg(ln(base_graph / ours_graph))), 3) AS by_device_time,
       round(exp(avg(ln(base_cupti / ours_cupti))), 3) AS by_cupti_time
FROM best WHERE ours_graph IS NOT NULL AND ours_cupti IS NOT NULL
GROUP BY ROLLUP (regime) ORDER BY list_position(['tiny', 'skinny', 'small-K', 'large'], regime) NULLS LAST;

-- 5. large shapes: which way the flagged rows disagree, by call length, and the SM clock read as
--    each config's timing ended (run_configs.details)
WITH clock AS (
    SELECT m, n, k, TRY_CAST(json_extract_string(details, '$.sm_clock_after_timing_mhz') AS INTEGER) AS mhz
    FROM 'db/bundled/run_configs.parquet' JOIN h3 USING (run_id)
)
SELECT graph_us >= 200 AS call_200us_or_more, count(*) AS rows,
       count(*) FILTER (WHERE flagged AND ratio > 1) AS graph_slower,
       median(mhz) FILTER (WHERE flagged AND ratio > 1) AS slower_mhz,
       count(*) FILTER (WHERE flagged AND ratio < 1) AS graph_faster,
       median(mhz) FILTER (WHERE flagged AND ratio < 1) AS faster_mhz
FROM x JOIN clock USING (m, n, k) WHERE regime = 'large' GROUP BY ALL ORDER BY 1;
