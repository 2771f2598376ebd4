-- The first and last day holding signals (NULLs when the table is empty). Not published.
SELECT min(day) AS first_day, max(day) AS last_day FROM signals;
