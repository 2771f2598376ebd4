-- Top friction: tool x error_class x friction_type in the period, with the change against the
-- previous period of the same length ($prev_start .. $start - 1).
-- Privacy: a group is shown only with at least $k signals in the period; its previous count
-- (and the change) only when that count is at least $k too.
WITH grouped AS (
    SELECT
        tool_attempted AS tool,
        error_class,
        friction_type,
        count(*) FILTER (WHERE day >= $start) AS n,
        count(*) FILTER (WHERE day < $start) AS prev_raw
    FROM signals
    WHERE day BETWEEN $prev_start AND $end
      AND triage_filter($platform, $tool, $v_major, $v_minor, $v_patch)
    GROUP BY ALL
)
SELECT
    CAST(tool AS VARCHAR) AS tool,
    CAST(error_class AS VARCHAR) AS error_class,
    CAST(friction_type AS VARCHAR) AS friction_type,
    n,
    CASE WHEN prev_raw >= $k THEN prev_raw END AS prev_n,
    CASE WHEN prev_raw >= $k THEN n - prev_raw END AS change,
    CASE WHEN prev_raw >= $k THEN round(100.0 * (n - prev_raw) / prev_raw, 1) END AS change_pct
FROM grouped
WHERE n >= $k
ORDER BY n DESC, tool, error_class, friction_type
LIMIT $limit;
