-- 0100: differentially private releases (collector/releases) and the arrival-order rewrite.
-- release_days: one row per (cube, closed received day) once its cells are stored; its
-- primary key makes a second computation of the same day fail instead of redrawing the noise.
-- release_cells: the released cells: key = the cell's values in the cube's dimension order,
-- joined by '|' (enum labels, catalogue names and versions: none holds a '|'), and its noisy
-- count. params records what the noise was calibrated with (epsilon, delta, scale, cap, bounds).
-- reordered_days: closed received days whose rows the retention job rewrote by signal_id.

CREATE TABLE release_days (
    cube        VARCHAR NOT NULL,
    day         DATE NOT NULL,
    params      VARCHAR NOT NULL,
    threshold   BIGINT NOT NULL,
    cells       BIGINT NOT NULL,
    PRIMARY KEY (cube, day)
);

CREATE TABLE release_cells (
    cube VARCHAR NOT NULL,
    day  DATE NOT NULL,
    key  VARCHAR NOT NULL,
    n    BIGINT NOT NULL
);

CREATE TABLE reordered_days (
    day DATE PRIMARY KEY
);
