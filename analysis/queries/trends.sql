-- Trend per day, per friction_type, and for all of them (series 'all').
-- A day is a spike when at least 3 of the 7 days before it were published and its count is at
-- least $spike_ratio x their mean. Days from $baseline_start (7 days before $start) feed the
-- baseline only; days from $start on are returned.
-- Privacy: a (day, friction_type) group is published only with at least $k signals; the 'all'
-- series and every baseline are sums of published groups only, so no figure depends on a
-- suppressed group.
WITH daily AS (
    SELECT day, friction_type, count(*) AS n
    FROM signals
    WHERE day BETWEEN $baseline_start AND $end
      AND triage_filter($platform, $tool, $v_major, $v_minor, $v_patch)
    GROUP BY ALL
    HAVING count(*) >= $k
),
published AS (
    SELECT day, CAST(friction_type AS VARCHAR) AS series, n FROM daily
    UNION ALL
    SELECT day, 'all' AS series, sum(n) AS n FROM daily GROUP BY day
),
scored AS (
    SELECT
        day,
        series,
        n,
        avg(n) OVER w AS baseline,
        count(*) OVER w AS baseline_days
    FROM published
    WINDOW w AS (
        PARTITION BY series ORDER BY day
        RANGE BETWEEN INTERVAL 7 DAY PRECEDING AND INTERVAL 1 DAY PRECEDING
    )
)
SELECT
    day,
    series,
    n,
    round(baseline, 2) AS baseline,
    coalesce(baseline_days >= 3 AND n >= $spike_ratio * baseline, false) AS spike
FROM scored
WHERE day >= $start
ORDER BY series = 'all' DESC, series, day;
