-- 0002: signal v2. The agent's raw attempt_count (1-100, a covert channel) is never stored again:
-- a bucket decided at the client takes its place, and rows stored before are mapped the way the
-- collector maps a v1 signal (contract.schema.attempts_bucket; a test checks they agree).
-- Every row is in the v2 shape afterwards, so schema_version is 2 for all of them.
-- The table is rebuilt rather than altered so that `attempts` keeps attempt_count's place: the
-- column order is the row shape's one definition (collector/rows.py).

CREATE TYPE attempts_bucket AS ENUM ('1', '2', '3-5', '6-10', 'more');

CREATE TABLE signals_v2 (
    signal_id       UUID PRIMARY KEY,
    schema_version  UTINYINT NOT NULL,
    day             DATE NOT NULL,
    received_day    DATE NOT NULL,
    friction_type   friction_type NOT NULL,
    error_category  error_category,
    intent_category intent_category,
    tool_attempted  tool_name NOT NULL,
    attempts        attempts_bucket,
    error_class     error_class NOT NULL,
    args            STRUCT(name arg_name, "type" arg_type, size size_bucket)[] NOT NULL,
    ring            STRUCT(tool tool_name, outcome outcome)[] NOT NULL,
    prev1_tool      tool_name,
    prev1_outcome   outcome,
    prev2_tool      tool_name,
    prev2_outcome   outcome,
    app_installed   BOOLEAN,
    app_running     BOOLEAN,
    app_permitted   BOOLEAN,
    client_version_major USMALLINT NOT NULL,
    client_version_minor USMALLINT NOT NULL,
    client_version_patch USMALLINT NOT NULL,
    client_platform platform NOT NULL
);

INSERT INTO signals_v2
SELECT
    signal_id, 2, day, received_day, friction_type, error_category, intent_category,
    tool_attempted,
    CASE
        WHEN attempt_count IS NULL THEN NULL
        WHEN attempt_count = 1 THEN '1'
        WHEN attempt_count = 2 THEN '2'
        WHEN attempt_count <= 5 THEN '3-5'
        WHEN attempt_count <= 10 THEN '6-10'
        ELSE 'more'
    END,
    error_class, args, ring, prev1_tool, prev1_outcome, prev2_tool, prev2_outcome,
    app_installed, app_running, app_permitted,
    client_version_major, client_version_minor, client_version_patch, client_platform
FROM signals
ORDER BY signal_id;  -- a random id: no arrival order survives the copy

DROP TABLE signals;

ALTER TABLE signals_v2 RENAME TO signals;
