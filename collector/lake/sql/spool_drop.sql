-- Forget a batch the lake holds.
DELETE FROM lake_outbox WHERE lake_batch = $batch;
