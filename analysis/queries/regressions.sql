-- Regressions by client version: (tool, error_class) friction that is new or growing in a
-- version against all earlier versions pooled. Shares are of each version's own signals (there
-- is no count of successful calls), so a version with more users does not look worse.
--   new:     shown in the version, and in no earlier version
--   growing: the version's share is at least $growth x the earlier versions' pooled share,
--            and above it by at least $min_z standard errors (a one-sided z-test against the
--            pooled share: z = (p - p0) / sqrt(p0 (1 - p0) / total)), so noise in small
--            versions is not reported
-- The version filter picks which versions are reported; the baseline always spans every
-- earlier version in the period.
-- Privacy: (version, tool, error_class) groups with fewer than $k signals are dropped FIRST;
-- totals, shares and baselines are sums of the kept groups only.
WITH raw AS (
    SELECT
        client_version_major,
        client_version_minor,
        client_version_patch,
        tool_attempted AS tool,
        error_class,
        count(*) AS n,
        min(day) AS first_day
    FROM signals
    WHERE day BETWEEN $start AND $end
      AND triage_filter($platform, $tool, NULL, NULL, NULL)
    GROUP BY ALL
    HAVING count(*) >= $k
),
groups AS (
    SELECT
        client_version_major * 10000000 + client_version_minor * 10000
            + client_version_patch AS vkey,
        tool,
        error_class,
        n,
        first_day
    FROM raw
),
versions AS (
    SELECT
        vkey,
        sum(n) AS total,
        min(first_day) AS first_day,
        sum(sum(n)) OVER (ORDER BY vkey ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
            AS base_total
    FROM groups
    GROUP BY vkey
),
compared AS (
    SELECT
        v.vkey,
        v.first_day,
        v.total,
        v.base_total,
        g.tool,
        g.error_class,
        g.n,
        (
            SELECT coalesce(sum(e.n), 0)
            FROM groups e
            WHERE e.vkey < v.vkey AND e.tool = g.tool AND e.error_class = g.error_class
        ) AS base_n
    FROM versions v
    JOIN groups g ON g.vkey = v.vkey
    WHERE v.base_total IS NOT NULL
      AND ($v_major IS NULL OR v.vkey // 10000000 = $v_major)
      AND ($v_minor IS NULL OR (v.vkey // 10000) % 1000 = $v_minor)
      AND ($v_patch IS NULL OR v.vkey % 10000 = $v_patch)
)
SELECT
    format('{}.{}.{}', vkey // 10000000, (vkey // 10000) % 1000, vkey % 10000) AS version,
    first_day,
    CAST(tool AS VARCHAR) AS tool,
    CAST(error_class AS VARCHAR) AS error_class,
    n,
    round(100.0 * n / total, 2) AS share_pct,
    base_n,
    round(100.0 * base_n / base_total, 2) AS base_share_pct,
    CASE WHEN base_n = 0 THEN 'new' ELSE 'growing' END AS status
FROM compared
WHERE base_n = 0
   OR (
       n * base_total >= $growth * base_n * total
       AND base_n < base_total
       AND (CAST(n AS DOUBLE) / total - CAST(base_n AS DOUBLE) / base_total)
           / sqrt((CAST(base_n AS DOUBLE) / base_total)
                  * (1 - CAST(base_n AS DOUBLE) / base_total) / total) >= $min_z
   )
ORDER BY vkey DESC, status = 'new' DESC, n DESC, tool, error_class
LIMIT $limit;
