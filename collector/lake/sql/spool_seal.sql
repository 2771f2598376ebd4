-- Seal the rows the spool holds as the next batch (run inside one transaction): they move to
-- the outbox under one number; rows a flush commits meanwhile stay for the next batch.
UPDATE lake_spool SET sealed = sealed + 1;
INSERT INTO lake_outbox BY NAME
SELECT (SELECT sealed FROM lake_spool) AS lake_batch, * FROM signals;
DELETE FROM signals;
