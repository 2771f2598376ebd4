-- The ids stored on the open received days ($2, the earliest being $1), each id as its two
-- 64-bit halves (collector/open_ids.py joins them into uuid.UUID.int): Python reads two
-- UBIGINT columns far faster than one 128-bit column.
SELECT
    received_day,
    CAST(CAST(signal_id AS UHUGEINT) >> 64 AS UBIGINT) AS hi,
    CAST(CAST(signal_id AS UHUGEINT) & CAST(18446744073709551615 AS UHUGEINT) AS UBIGINT) AS lo
FROM signals
WHERE received_day >= $1 AND list_contains($2, received_day)
