-- The number of the batch sealed last.
SELECT sealed FROM lake_spool;
