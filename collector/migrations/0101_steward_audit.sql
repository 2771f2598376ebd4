-- 0101: the steward role's audit log: who (a token's label, never the token or an address),
-- when (the UTC day of the read), what (the route and its validated filter).

CREATE TABLE steward_audit (
    read_day DATE NOT NULL,
    label    VARCHAR NOT NULL,
    route    VARCHAR NOT NULL,
    filter   VARCHAR NOT NULL
);
