-- 0002: signal v2. The agent's raw attempt_count (1-100, a covert channel) is never stored again:
-- a bucket decided at the client takes its place, and rows stored before are mapped the way the
-- collector maps a v1 signal (contract.schema.attempts_bucket; a test checks they agree).
-- Every row is in the v2 shape afterwards, so schema_version is 2 for all of them.

CREATE TYPE attempts_bucket AS ENUM ('1', '2', '3-5', '6-10', 'more');

ALTER TABLE signals ADD COLUMN attempts attempts_bucket;

UPDATE signals SET
    attempts = CASE
        WHEN attempt_count IS NULL THEN NULL
        WHEN attempt_count = 1 THEN '1'
        WHEN attempt_count = 2 THEN '2'
        WHEN attempt_count <= 5 THEN '3-5'
        WHEN attempt_count <= 10 THEN '6-10'
        ELSE 'more'
    END,
    schema_version = 2;

ALTER TABLE signals DROP COLUMN attempt_count;
