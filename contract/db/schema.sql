-- The table behind GET /db and GET /db/list (contract/CONTRACT.md, "db").
-- The runner loads this file into its private PostgreSQL before any server
-- starts; every value is a formula of the id, so an expected answer can be
-- computed without the database and a run is the same on every machine.
CREATE TABLE items (
    id          integer       PRIMARY KEY,
    name        text          NOT NULL,
    description text          NOT NULL,
    quantity    integer       NOT NULL,
    price       numeric(8, 2) NOT NULL,
    updated     timestamptz   NOT NULL
);

INSERT INTO items (id, name, description, quantity, price, updated)
SELECT i,
       'item-' || i,
       'Row ' || i || ' of the netbench items table: "seeded", fixed & checked.',
       (i * 31) % 1000,
       ((i * 7919) % 100000) / 100.0,
       timestamptz '2020-01-01 00:00:00+00' + (i::bigint * 1234567) * interval '1 millisecond'
FROM generate_series(1, 10000) AS i;

ANALYZE items;
