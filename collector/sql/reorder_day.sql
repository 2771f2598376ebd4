-- The rows of one closed received day ($1) as the rewrite keeps them (collector/retention.py):
-- in signal_id order, each id once, and none stored on an earlier received day (a retry that
-- came after its first copy's day had closed: the store's ids cover the days not yet closed).
-- A copy carries its first copy's `day`, so only rows of the same `day` are compared (the
-- zone maps of the earlier days skip the rest).
CREATE TEMP TABLE lmcp_reorder AS
SELECT d.* FROM signals AS d
WHERE d.received_day = $1
    AND NOT EXISTS (
        SELECT 1 FROM signals AS e
        WHERE e.received_day < $1 AND e.day = d.day AND e.signal_id = d.signal_id
    )
QUALIFY row_number() OVER (PARTITION BY d.signal_id) = 1
ORDER BY d.signal_id
