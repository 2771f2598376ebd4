-- Intent distribution: what users were trying to do when friction happened, as the agent chose
-- it from the spec's list ('unspecified' when it gave none).
-- Privacy: an intent is shown only with at least $k signals; the share is of
-- shown groups only.
-- (Grouping on the raw ENUM column first lets DuckDB use its fast small-domain aggregate.)
WITH groups AS (
    SELECT intent_category, count(*) AS n
    FROM signals
    WHERE day BETWEEN $start AND $end
      AND triage_filter($platform, $tool, $v_major, $v_minor, $v_patch)
    GROUP BY ALL
    HAVING count(*) >= $k
)
SELECT
    coalesce(CAST(intent_category AS VARCHAR), 'unspecified') AS intent,
    n,
    round(100.0 * n / sum(n) OVER (), 1) AS share_pct
FROM groups
ORDER BY n DESC, intent;
