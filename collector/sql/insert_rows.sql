-- One SMALL flush of the group-commit writer in one INSERT, one transaction: the registered
-- Arrow table `incoming` holds the rows already shaped from the validated models
-- (collector/rows.py, ROWS; ids distinct within the flush), so DuckDB only casts: planning the
-- derivations of insert_bodies.sql costs ~2-3 ms, most of a small flush. Enum strings are
-- cast to the ENUM types here. On a stored id, see insert_table in collector/writer.py.
-- $1: received_day (the collector's UTC day).
INSERT INTO signals (
    signal_id, schema_version, day, received_day, friction_type, error_category,
    intent_category, tool_attempted, attempts, error_class, args, ring,
    prev1_tool, prev1_outcome, prev2_tool, prev2_outcome,
    app_installed, app_running, app_permitted,
    client_version_major, client_version_minor, client_version_patch, client_platform
)
SELECT
    signal_id, schema_version, day, $1, friction_type, error_category,
    intent_category, tool_attempted, attempts, error_class, args, ring,
    prev1_tool, prev1_outcome, prev2_tool, prev2_outcome,
    app_installed, app_running, app_permitted,
    client_version_major, client_version_minor, client_version_patch, client_platform
FROM incoming
