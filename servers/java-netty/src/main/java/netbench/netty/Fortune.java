package netbench.netty;

/** One row of the contract's {@code fortune} table (contract/db/schema.sql). */
record Fortune(int id, String message) {}
