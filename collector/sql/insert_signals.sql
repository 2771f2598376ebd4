-- One flush of the group-commit writer: every row of the registered Arrow table `incoming`
-- (ids distinct within the flush) in one INSERT. The writer runs it in a transaction; when a
-- stored id makes the primary key refuse it, the writer rolls back and runs it again on the
-- rows whose ids `stored_ids` did not find (see collector/writer.py).
-- $1: received_day (the collector's UTC day).
INSERT INTO signals (
    signal_id, schema_version, day, received_day, friction_type, error_category,
    intent_category, tool_attempted, attempt_count, error_class, args, ring,
    prev1_tool, prev1_outcome, prev2_tool, prev2_outcome,
    app_installed, app_running, app_permitted,
    client_version_major, client_version_minor, client_version_patch, client_platform
)
SELECT
    signal_id, schema_version, day, $1, friction_type, error_category,
    intent_category, tool_attempted, attempt_count, error_class, args, ring,
    prev1_tool, prev1_outcome, prev2_tool, prev2_outcome,
    app_installed, app_running, app_permitted,
    client_version_major, client_version_minor, client_version_patch, client_platform
FROM incoming
