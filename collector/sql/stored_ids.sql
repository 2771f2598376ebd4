-- The ids of the registered Arrow table `incoming` that are already stored (retries).
SELECT s.signal_id FROM signals AS s SEMI JOIN incoming AS i ON s.signal_id = i.signal_id
