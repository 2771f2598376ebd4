-- 0110: releases on known domains with the Gaussian mechanism (collector/releases), one row
-- per (cube, period) in release_periods and every cell of its domain in release_cells.
-- The daily Laplace releases before this are dropped: their cells were selected by a
-- threshold on one received day and cannot be summed with the new ones.
-- release_periods: day = the period's first day (a Monday for a weekly cube); its primary
-- key makes a second draw of the same period fail instead of replacing the first. scale is
-- the Gaussian's standard deviation of every cell (a figure summing k cells has variance
-- k * scale^2); threshold is 0 for a known domain. params records the accountant's figures.
-- release_cells: key = the cell's values in the cube's dimension order joined by '|' (enum
-- labels, catalogue names and versions: none holds a '|'), n its noisy count (may be < 0).
DROP TABLE release_days;
DROP TABLE release_cells;

CREATE TABLE release_periods (
    cube      VARCHAR NOT NULL,
    day       DATE NOT NULL,
    kind      VARCHAR NOT NULL,
    scale     DOUBLE NOT NULL,
    threshold BIGINT NOT NULL,
    cells     BIGINT NOT NULL,
    params    VARCHAR NOT NULL,
    PRIMARY KEY (cube, day)
);

CREATE TABLE release_cells (
    cube VARCHAR NOT NULL,
    day  DATE NOT NULL,
    key  VARCHAR NOT NULL,
    n    BIGINT NOT NULL
);
