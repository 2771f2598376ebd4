-- The ids of the registered Arrow table `incoming` already stored on a day not yet closed.
SELECT o.signal_id FROM open_ids AS o SEMI JOIN incoming AS i ON o.signal_id = i.signal_id
