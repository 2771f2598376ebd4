-- The signals table for analysts, as typed columns (Parquet keeps the nested lists); every
-- column of the table, in its order, the id as text.
-- $1: only rows received on or after this day (NULL: all).
SELECT * REPLACE (CAST(signal_id AS VARCHAR) AS signal_id)
FROM signals
WHERE $1::DATE IS NULL OR received_day >= $1::DATE
ORDER BY received_day, signal_id
