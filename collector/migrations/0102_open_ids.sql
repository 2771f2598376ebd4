-- 0102: de-duplication without an index over every stored row. The signals table loses its
-- primary key (an index over every row: ~46 B a signal on disk, rewritten at checkpoints, so
-- ingest slowed as the file grew); open_ids keeps, with the key, only the ids of the received
-- days not yet closed. The write path inserts each flush's ids there in the flush's
-- transaction (a stored or repeated id fails it: collector/store.py); the closed-day job drops a
-- day's ids once it rewrote that day, de-duplicated against the days before (retention.py).
-- The table is rebuilt rather than altered (DuckDB cannot drop a key); closed days keep their
-- signal_id order (no arrival order survives), the open days' rows are copied in that order too.

CREATE TABLE signals_v3 (
    signal_id       UUID NOT NULL,
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

INSERT INTO signals_v3 SELECT * FROM signals ORDER BY received_day, signal_id;

DROP TABLE signals;

ALTER TABLE signals_v3 RENAME TO signals;

CREATE TABLE open_ids (
    signal_id    UUID PRIMARY KEY,
    received_day DATE NOT NULL
);

INSERT INTO open_ids
SELECT signal_id, received_day FROM signals
WHERE received_day NOT IN (SELECT day FROM reordered_days);
