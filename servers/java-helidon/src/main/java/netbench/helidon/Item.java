package netbench.helidon;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.math.BigDecimal;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;

/** One row of the contract's {@code items} table (contract/db/schema.sql). */
record Item(int id, String name, String description, int quantity, BigDecimal price, Instant updated) {
    /** The columns in the order {@link #from} reads them. */
    static final String COLUMNS = "id, name, description, quantity, price, updated";

    /** The row at the result set's cursor; {@code timestamptz} arrives as an offset date-time in UTC. */
    static Item from(ResultSet rs) throws SQLException {
        return new Item(
                rs.getInt(1),
                rs.getString(2),
                rs.getString(3),
                rs.getInt(4),
                rs.getBigDecimal(5),
                rs.getObject(6, OffsetDateTime.class).toInstant());
    }

    /**
     * The contract's object of exactly six keys. The price goes out as a JSON number with the
     * column's own digits ({@code 79.19}, {@code 79.10}), never a string or a rounded double.
     */
    void write(JsonGenerator g) throws IOException {
        g.writeStartObject();
        g.writeNumberField("id", id);
        g.writeStringField("name", name);
        g.writeStringField("description", description);
        g.writeNumberField("quantity", quantity);
        g.writeNumberField("price", price);
        g.writeStringField("updated", Work.DATE_OUT.format(updated));
        g.writeEndObject();
    }
}
