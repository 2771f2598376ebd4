-- The ids of the flush being written (the registered Arrow table `incoming`) join the open
-- days' ids, in the flush's transaction: an id already there, or repeated in the flush, fails
-- the statement and the transaction, and the store writes the flush again with only the ids
-- not stored yet (collector/store.py). $1: received_day (the collector's UTC day).
INSERT INTO open_ids SELECT signal_id, $1 FROM incoming
