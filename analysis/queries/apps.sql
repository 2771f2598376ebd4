-- App state against genuine tool failures, per tool:
--   not_installed / not_running / not_permitted: the app behind the tool was the problem
--     (checked in that order: an app that is not installed is not running either);
--   genuine: the app was fine, or the tool is LMCP's own (no app), so the tool itself failed.
-- Privacy: a (tool, app_state) group is shown only with at least $k signals; tool_n and the
-- share are sums of shown groups only.
-- (The big aggregate groups on the ENUM and a small integer code; labels come after.)
WITH raw AS (
    SELECT
        tool_attempted,
        CAST(
            CASE
                WHEN app_installed = false THEN 1
                WHEN app_running = false THEN 2
                WHEN app_permitted = false THEN 3
                ELSE 0
            END AS UTINYINT
        ) AS state,
        count(*) AS n
    FROM signals
    WHERE day BETWEEN $start AND $end
      AND triage_filter($platform, $tool, $v_major, $v_minor, $v_patch)
    GROUP BY ALL
),
groups AS (
    SELECT
        tool_attempted AS tool,
        ['genuine', 'not_installed', 'not_running', 'not_permitted'][state + 1] AS app_state,
        sum(n) AS n
    FROM raw
    GROUP BY ALL
    HAVING sum(n) >= $k
),
totals AS (
    SELECT tool, sum(n) AS tool_n FROM groups GROUP BY tool
)
SELECT
    CAST(tool AS VARCHAR) AS tool,
    app_state,
    n,
    tool_n,
    round(100.0 * n / tool_n, 1) AS share_pct
FROM groups
JOIN totals USING (tool)
ORDER BY tool_n DESC, tool, n DESC, app_state;
