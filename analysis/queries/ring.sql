-- Ring patterns: the most common 2- and 3-call sequences ending in a failure. The failed call
-- is the signal's own (tool_attempted, error_class); prev1_* is the call right before it and
-- prev2_* the one before that (shaped at ingest, so this is a plain GROUP BY).
-- Privacy: sequences can fingerprint a user, so a sequence is shown only with at least $k
-- signals. `calls` is 2 (prev1 -> failure) or 3 (prev2 -> prev1 -> failure).
WITH failing AS (
    SELECT prev2_tool, prev2_outcome, prev1_tool, prev1_outcome, tool_attempted, error_class
    FROM signals
    WHERE day BETWEEN $start AND $end
      AND prev1_tool IS NOT NULL
      AND triage_filter($platform, $tool, $v_major, $v_minor, $v_patch)
),
groups AS (
    SELECT
        CASE WHEN grouping(prev2_tool) = 0 THEN 3 ELSE 2 END AS calls,
        prev2_tool, prev2_outcome, prev1_tool, prev1_outcome, tool_attempted, error_class,
        count(*) AS n
    FROM failing
    GROUP BY GROUPING SETS (
        (prev1_tool, prev1_outcome, tool_attempted, error_class),
        (prev2_tool, prev2_outcome, prev1_tool, prev1_outcome, tool_attempted, error_class)
    )
    HAVING count(*) >= $k AND (grouping(prev2_tool) = 1 OR prev2_tool IS NOT NULL)
)
SELECT
    calls,
    CAST(prev2_tool AS VARCHAR) AS prev2_tool,
    CAST(prev2_outcome AS VARCHAR) AS prev2_outcome,
    CAST(prev1_tool AS VARCHAR) AS prev1_tool,
    CAST(prev1_outcome AS VARCHAR) AS prev1_outcome,
    CAST(tool_attempted AS VARCHAR) AS tool,
    CAST(error_class AS VARCHAR) AS error_class,
    n
FROM groups
QUALIFY row_number() OVER (
    PARTITION BY calls
    ORDER BY n DESC, prev2_tool, prev2_outcome, prev1_tool, prev1_outcome, tool, error_class
) <= $limit
ORDER BY calls, n DESC, prev2_tool, prev2_outcome, prev1_tool, prev1_outcome, tool, error_class;
