-- How many attempts came before the report, in the buckets the client sends (signal v2):
-- 1, 2, 3-5, 6-10, more ('unspecified' when the agent gave none). Many attempts before a report
-- means the agent fought the tool for a while.
-- Privacy: a bucket is shown only with at least $k signals; the share is of shown buckets only.
WITH groups AS (
    SELECT coalesce(CAST(attempts AS VARCHAR), 'unspecified') AS attempts, count(*) AS n
    FROM signals
    WHERE day BETWEEN $start AND $end
      AND triage_filter($platform, $tool, $v_major, $v_minor, $v_patch)
    GROUP BY ALL
    HAVING count(*) >= $k
)
SELECT attempts, n, round(100.0 * n / sum(n) OVER (), 1) AS share_pct
FROM groups
ORDER BY list_position(['1', '2', '3-5', '6-10', 'more', 'unspecified'], attempts);
