-- Argument shapes: per tool and argument, which (type, size bucket) combinations come with
-- failures. `size` is '-' for types without a size. share_pct is the combination's share of
-- the argument's shown combinations.
-- Privacy: shapes can fingerprint a user, so a (tool, argument, type, size) group is shown
-- only with at least $k signals, and shares are of shown groups only.
WITH shapes AS (
    SELECT tool_attempted AS tool, unnest(args) AS arg
    FROM signals
    WHERE day BETWEEN $start AND $end
      AND triage_filter($platform, $tool, $v_major, $v_minor, $v_patch)
),
groups AS (
    SELECT tool, arg.name AS arg, arg."type" AS arg_type, arg.size AS size, count(*) AS n
    FROM shapes
    GROUP BY ALL
    HAVING count(*) >= $k
)
SELECT
    CAST(tool AS VARCHAR) AS tool,
    CAST(arg AS VARCHAR) AS arg,
    CAST(arg_type AS VARCHAR) AS arg_type,
    coalesce(CAST(size AS VARCHAR), '-') AS size,
    n,
    round(100.0 * n / sum(n) OVER (PARTITION BY tool, arg), 1) AS share_pct
FROM groups
ORDER BY n DESC, tool, arg, arg_type, size
LIMIT $limit;
