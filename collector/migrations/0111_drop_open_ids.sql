-- 0111: the open days' ids leave the file. The store keeps them in memory, loaded from the
-- open days' rows of `signals` itself when it opens (collector/open_ids.py), so the store's
-- transaction is the one durable truth: nothing separate can disagree with it after a crash.
-- A keyed INSERT per flush cost as much as the rows' own INSERT (docs/write-path.md).
DROP TABLE open_ids;
