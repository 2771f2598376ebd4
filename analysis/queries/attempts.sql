-- attempt_count distribution, in buckets: 1, 2, 3, 4-5, 6-10, 11+ ('unspecified' when the agent
-- gave none). Many attempts before a report means the agent fought the tool for a while.
-- Privacy: a bucket is shown only with at least $k signals; the share is of shown buckets only.
-- (Counting per raw attempt_count first keeps the big aggregate on a small integer domain.)
WITH raw AS (
    SELECT attempt_count, count(*) AS n
    FROM signals
    WHERE day BETWEEN $start AND $end
      AND ($platform IS NULL OR client_platform = CAST($platform AS platform))
      AND ($tool IS NULL OR tool_attempted = CAST($tool AS tool_name))
      AND ($v_major IS NULL OR client_version_major = $v_major)
      AND ($v_minor IS NULL OR client_version_minor = $v_minor)
      AND ($v_patch IS NULL OR client_version_patch = $v_patch)
    GROUP BY attempt_count
),
groups AS (
    SELECT
        CASE
            WHEN attempt_count IS NULL THEN 'unspecified'
            WHEN attempt_count <= 3 THEN CAST(attempt_count AS VARCHAR)
            WHEN attempt_count <= 5 THEN '4-5'
            WHEN attempt_count <= 10 THEN '6-10'
            ELSE '11+'
        END AS attempts,
        sum(n) AS n
    FROM raw
    GROUP BY ALL
    HAVING sum(n) >= $k
)
SELECT attempts, n, round(100.0 * n / sum(n) OVER (), 1) AS share_pct
FROM groups
ORDER BY list_position(['1', '2', '3', '4-5', '6-10', '11+', 'unspecified'], attempts);
