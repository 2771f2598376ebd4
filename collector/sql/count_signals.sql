-- How many signals are stored (received on or after $1, when given).
SELECT count(*) FROM signals WHERE $1::DATE IS NULL OR received_day >= $1::DATE
