-- Rows the writer stored and no batch holds yet.
SELECT count(*) FROM signals;
