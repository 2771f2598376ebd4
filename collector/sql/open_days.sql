-- The received days from $1 on that `signals` holds rows of and that are not closed yet (not
-- rewritten: reordered_days). The zone maps of the rows received before $1 are skipped.
SELECT DISTINCT received_day FROM signals WHERE received_day >= $1
EXCEPT
SELECT day FROM reordered_days
