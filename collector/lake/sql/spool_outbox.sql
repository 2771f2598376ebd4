-- Sealed batches waiting to be shipped: the signals table's columns and types, plus the
-- batch number (the Delta transaction's version). Created empty from the current table.
CREATE TABLE IF NOT EXISTS lake_outbox AS
SELECT CAST(0 AS BIGINT) AS lake_batch, * FROM signals LIMIT 0;
