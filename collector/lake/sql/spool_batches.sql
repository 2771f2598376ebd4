-- Sealed batches not dropped yet, oldest first: (number, rows).
SELECT lake_batch, count(*) FROM lake_outbox GROUP BY lake_batch ORDER BY lake_batch;
