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

-- The table behind GET /fortunes (contract/CONTRACT.md, "fortunes"):
-- TechEmpower's twelve rows, one of them markup that must come back escaped
-- and one outside ASCII.
CREATE TABLE fortune (
    id      integer       PRIMARY KEY,
    message varchar(2048) NOT NULL
);

INSERT INTO fortune (id, message) VALUES
    (1, 'fortune: No such file or directory'),
    (2, 'A computer scientist is someone who fixes things that aren''t broken.'),
    (3, 'After enough decimal places, nobody gives a damn.'),
    (4, 'A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1'),
    (5, 'A computer program does what you tell it to do, not what you want it to do.'),
    (6, 'Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen'),
    (7, 'Any program that runs right is obsolete.'),
    (8, 'A list is only as strong as its weakest link. — Donald Knuth'),
    (9, 'Feature: A bug with seniority.'),
    (10, 'Computers make very fast, very accurate mistakes.'),
    (11, '<script>alert("This should not be displayed in a browser alert box.");</script>'),
    (12, 'フレームワークのベンチマーク');

ANALYZE fortune;

-- The table behind GET /queries and GET /updates (contract/CONTRACT.md,
-- "queries" and "updates"): TechEmpower's World, 10,000 rows, each
-- randomNumber a formula of the id so that an answer can be checked without
-- the database. /updates changes rows; the runner puts them back after each
-- updates cell (crates/contract/src/world.rs, RESEED_SQL).
CREATE TABLE world (
    id           integer PRIMARY KEY,
    randomnumber integer NOT NULL
);

INSERT INTO world (id, randomnumber)
SELECT i, 1 + (i * 7919 + 13) % 10000
FROM generate_series(1, 10000) AS i;

ANALYZE world;
