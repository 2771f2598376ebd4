-- The shipper's state in a collector's own DuckDB file (its spool): one row, the spool's
-- identity in the lake (the Delta transaction's app_id) and the last batch number sealed.
CREATE TABLE IF NOT EXISTS lake_spool (
    app_id VARCHAR NOT NULL,
    sealed BIGINT NOT NULL
);
