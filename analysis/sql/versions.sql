-- Client versions seen in the period, newest first, for the dashboard's filter.
-- Privacy: a version is listed only with at least $k signals.
SELECT
    format('{}.{}.{}', client_version_major, client_version_minor, client_version_patch)
        AS version,
    count(*) AS n
FROM signals
WHERE day BETWEEN $start AND $end
GROUP BY client_version_major, client_version_minor, client_version_patch
HAVING count(*) >= $k
ORDER BY client_version_major DESC, client_version_minor DESC, client_version_patch DESC;
