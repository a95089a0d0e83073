package netbench.helidon;

/** One row of the contract's {@code fortune} table (contract/db/schema.sql); mustache.java reads its accessors. */
record Fortune(int id, String message) {}
