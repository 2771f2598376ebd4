-- The signals table for analysts as flat text columns: every column of the table, in its
-- order; the id and the ENUM columns as text, the nested lists as JSON arrays.
-- $1: only rows received on or after this day (NULL: all).
SELECT * REPLACE (
    CAST(signal_id AS VARCHAR) AS signal_id,
    CAST(friction_type AS VARCHAR) AS friction_type,
    CAST(error_category AS VARCHAR) AS error_category,
    CAST(intent_category AS VARCHAR) AS intent_category,
    CAST(tool_attempted AS VARCHAR) AS tool_attempted,
    CAST(attempts AS VARCHAR) AS attempts,
    CAST(error_class AS VARCHAR) AS error_class,
    CAST(to_json(args) AS VARCHAR) AS args,
    CAST(to_json(ring) AS VARCHAR) AS ring,
    CAST(prev1_tool AS VARCHAR) AS prev1_tool,
    CAST(prev1_outcome AS VARCHAR) AS prev1_outcome,
    CAST(prev2_tool AS VARCHAR) AS prev2_tool,
    CAST(prev2_outcome AS VARCHAR) AS prev2_outcome,
    CAST(client_platform AS VARCHAR) AS client_platform
)
FROM signals
WHERE $1::DATE IS NULL OR received_day >= $1::DATE
ORDER BY received_day, signal_id
