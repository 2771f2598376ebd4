-- Platform split: signals per platform and tool, with the tool's share of the platform.
-- Privacy: a (platform, tool) group is shown only with at least $k signals; platform_n and the
-- share are sums of shown groups only, so no figure depends on a suppressed group.
WITH groups AS (
    SELECT client_platform AS platform, tool_attempted AS tool, count(*) AS n
    FROM signals
    WHERE day BETWEEN $start AND $end
      AND triage_filter($platform, $tool, $v_major, $v_minor, $v_patch)
    GROUP BY ALL
    HAVING count(*) >= $k
),
totals AS (
    SELECT platform, sum(n) AS platform_n FROM groups GROUP BY platform
)
SELECT
    CAST(platform AS VARCHAR) AS platform,
    CAST(tool AS VARCHAR) AS tool,
    n,
    platform_n,
    round(100.0 * n / platform_n, 1) AS share_pct
FROM groups
JOIN totals USING (platform)
ORDER BY platform, n DESC, tool;
