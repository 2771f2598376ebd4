-- One flush written from its models, in one INSERT, one transaction: the registered Arrow
-- table `incoming` holds the rows already shaped from the validated models (collector/rows.py,
-- ROWS; ids distinct within the flush), so DuckDB only casts the enum strings to the ENUM
-- types (a value outside them fails the statement). Columns are matched BY NAME: their one
-- definition is collector/rows.py SIGNAL_COLUMNS. On a stored id, see collector/store.py.
-- $1: received_day (the collector's UTC day).
INSERT INTO signals BY NAME
SELECT *, $1 AS received_day FROM incoming
