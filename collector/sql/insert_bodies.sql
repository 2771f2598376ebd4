-- One flush written from its request bodies in one INSERT, one transaction: DuckDB parses the
-- very request bodies the collector validated ($2, one string per request) with
-- json_transform_strict and derives the stored columns, with no Python per row.
-- Anything DuckDB would read differently from pydantic fails the statement instead (a repeated
-- key, a key left out, a `urn:uuid:` id), and so does a stored or repeated id (the primary
-- key): the store then writes the flush from its validated models (collector/store.py).
-- Enum strings are cast to the ENUM types on insert: a value outside them fails the statement.
-- Columns are matched BY NAME (their one definition: collector/rows.py SIGNAL_COLUMNS).
-- $1: received_day (the collector's UTC day); $2: the bodies; $3: the number of signals
-- validated from each body (a body holding another number fails the statement).
INSERT INTO signals BY NAME
SELECT
    CAST(s.signal_id AS UUID) AS signal_id,
    s.schema_version AS schema_version,
    CAST(s.day AS DATE) AS day,
    $1 AS received_day,
    s.friction_type AS friction_type,
    s.error_category AS error_category,
    s.intent_category AS intent_category,
    s.tool_attempted AS tool_attempted,
    s.attempts AS attempts,
    s.error_class AS error_class,
    s.args AS args,
    s.ring AS ring,
    -- The two calls right before the last (failed) one; NULL when the ring is shorter.
    prev1.tool AS prev1_tool,
    prev1.outcome AS prev1_outcome,
    prev2.tool AS prev2_tool,
    prev2.outcome AS prev2_outcome,
    s.app.installed AS app_installed,
    s.app.running AS app_running,
    s.app.permitted AS app_permitted,
    version[1] AS client_version_major,
    version[2] AS client_version_minor,
    version[3] AS client_version_patch,
    s.client.platform AS client_platform
FROM (
    SELECT
        s,
        s.ring[-2] AS prev1,
        s.ring[-3] AS prev2,
        -- The model's pattern: three ASCII numbers of at most 3, 3 and 4 digits. Split once
        -- here: three split_part casts are slower to plan, every flush.
        CAST(string_split(s.client.version, '.') AS USMALLINT[]) AS version
    FROM (
        SELECT unnest(
            CASE WHEN len(doc.signals) = n THEN doc.signals
            ELSE error('a body does not hold the signals validated from it') END
        ) AS s
        FROM (
            SELECT
                json_transform_strict(body, '{"signals": [{
                    "schema_version": "UTINYINT", "signal_id": "VARCHAR", "day": "VARCHAR",
                    "friction_type": "VARCHAR", "error_category": "VARCHAR",
                    "intent_category": "VARCHAR", "tool_attempted": "VARCHAR",
                    "attempts": "VARCHAR", "error_class": "VARCHAR",
                    "args": [{"name": "VARCHAR", "type": "VARCHAR", "size": "VARCHAR"}],
                    "ring": [{"tool": "VARCHAR", "outcome": "VARCHAR"}],
                    "app": {"installed": "BOOLEAN", "running": "BOOLEAN", "permitted": "BOOLEAN"},
                    "client": {"version": "VARCHAR", "platform": "VARCHAR"}
                }]}') AS doc,
                n
            FROM (SELECT unnest($2) AS body, unnest($3) AS n)
        )
    )
)
