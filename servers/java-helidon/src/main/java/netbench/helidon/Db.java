package netbench.helidon;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The PostgreSQL side of {@code /db}, {@code /db/list}, {@code /fortunes}, {@code /queries} and
 * {@code /updates}: every request borrows a connection from HikariCP and runs prepared
 * statements through the JDBC driver (pgjdbc), so an answer always shows the tables as they are
 * now. JDBC blocks; on the connection's virtual thread a blocked socket read parks the virtual
 * thread and frees its carrier, which is why plain JDBC is the usual database access under
 * Helidon SE 4.
 */
final class Db implements AutoCloseable {
    static final String ROW = "SELECT " + Item.COLUMNS + " FROM items WHERE id = ?";
    static final String LIST = "SELECT " + Item.COLUMNS + " FROM items WHERE id >= ? ORDER BY id LIMIT ?";
    static final String FORTUNES = "SELECT id, message FROM fortune";
    /** The contract's floor for DATABASE_POOL_SIZE, for a run by hand that does not set it. */
    static final int DEFAULT_POOL_SIZE = 4;

    /** Plain BigDecimal text, so a price can never come out as 1E+2. */
    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
            .build();

    private final HikariDataSource pool;

    private Db(HikariDataSource pool) {
        this.pool = pool;
    }

    /**
     * Opens the pool with HikariCP's defaults but for the maximum size (minimumIdle follows it,
     * so the pool keeps that many connections open). Its default initializationFailTimeout makes
     * an unreachable database fail here, at startup, rather than at the first request.
     */
    static Db open(String databaseUrl, String poolSize) {
        return new Db(new HikariDataSource(config(databaseUrl, poolSize)));
    }

    static HikariConfig config(String databaseUrl, String poolSize) {
        ConnectionInfo info = ConnectionInfo.parse(databaseUrl);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(info.jdbcUrl());
        if (info.user() != null) {
            config.setUsername(info.user());
        }
        if (info.password() != null) {
            config.setPassword(info.password());
        }
        config.setMaximumPoolSize(poolSize(poolSize));
        return config;
    }

    static int poolSize(String value) {
        if (value == null || value.isEmpty()) {
            return DEFAULT_POOL_SIZE;
        }
        int size;
        try {
            size = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("DATABASE_POOL_SIZE is not an integer: " + value);
        }
        if (size < 1) {
            throw new IllegalArgumentException("DATABASE_POOL_SIZE must be at least 1: " + value);
        }
        return size;
    }

    /** The row's JSON, or null when no row has that id. */
    byte[] row(int id) throws SQLException {
        Item item = null;
        try (Connection c = pool.getConnection(); PreparedStatement st = c.prepareStatement(ROW)) {
            st.setInt(1, id);
            try (ResultSet rs = st.executeQuery()) {
                if (rs.next()) {
                    item = Item.from(rs);
                }
            }
        }
        // Rendered after the connection is back in the pool: it is held only for the query.
        return item == null ? null : render(List.of(item), false);
    }

    /** The JSON array of at most {@code count} rows from id {@code from} on, in id order. */
    byte[] list(int from, int count) throws SQLException {
        List<Item> items = new ArrayList<>(count);
        try (Connection c = pool.getConnection(); PreparedStatement st = c.prepareStatement(LIST)) {
            st.setInt(1, from);
            st.setInt(2, count);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    items.add(Item.from(rs));
                }
            }
        }
        return render(items, true);
    }

    /** Every row of the fortune table, in the order PostgreSQL returns them. */
    List<Fortune> fortunes() throws SQLException {
        List<Fortune> rows = new ArrayList<>(16);
        try (Connection c = pool.getConnection();
                PreparedStatement st = c.prepareStatement(FORTUNES);
                ResultSet rs = st.executeQuery()) {
            while (rs.next()) {
                rows.add(new Fortune(rs.getInt(1), rs.getString(2)));
            }
        }
        return rows; // rendered after the connection is back in the pool
    }

    /**
     * {@code n} random rows of {@code world}, each read with its own execution of the prepared
     * statement (one round trip per row, no {@code IN (...)}), on one pooled connection.
     */
    List<World.Row> worldRows(int n) throws SQLException {
        try (Connection c = pool.getConnection()) {
            return read(c, n);
        }
    }

    /**
     * {@code n} random rows read as for {@link #worldRows}, each given a new random number from
     * 1 to 10,000, then written back as one JDBC batch of one UPDATE per distinct id (pgjdbc sends
     * the batch in one round trip). The ids are written in increasing order, so two requests that
     * update the same rows at once take their row locks in the same order and cannot deadlock;
     * an id drawn twice is written once, with the number of its last drawing (the answer holds
     * both, as the contract allows).
     */
    List<World.Row> updateWorld(int n) throws SQLException {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        try (Connection c = pool.getConnection()) {
            List<World.Row> read = read(c, n);
            List<World.Row> changed = new ArrayList<>(read.size());
            Map<Integer, Integer> writes = new TreeMap<>();
            for (World.Row row : read) {
                World.Row now = new World.Row(row.id(), 1 + random.nextInt(World.ROWS));
                changed.add(now);
                writes.put(now.id(), now.randomNumber());
            }
            try (PreparedStatement st = c.prepareStatement(World.UPDATE)) {
                for (Map.Entry<Integer, Integer> w : writes.entrySet()) {
                    st.setInt(1, w.getValue());
                    st.setInt(2, w.getKey());
                    st.addBatch();
                }
                st.executeBatch();
            }
            return changed;
        }
    }

    private static List<World.Row> read(Connection c, int n) throws SQLException {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        List<World.Row> rows = new ArrayList<>(n);
        try (PreparedStatement st = c.prepareStatement(World.SELECT)) {
            for (int i = 0; i < n; i++) {
                int id = 1 + random.nextInt(World.ROWS);
                st.setInt(1, id);
                try (ResultSet rs = st.executeQuery()) {
                    if (!rs.next()) {
                        throw new SQLException("world has no row with id " + id);
                    }
                    rows.add(new World.Row(rs.getInt(1), rs.getInt(2)));
                }
            }
        }
        return rows;
    }

    /** One row as an object, or the rows as an array. */
    static byte[] render(List<Item> items, boolean array) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 + 160 * items.size());
        try (JsonGenerator g = JSON.createGenerator(out)) {
            if (array) {
                g.writeStartArray();
            }
            for (Item item : items) {
                item.write(g);
            }
            if (array) {
                g.writeEndArray();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return out.toByteArray();
    }

    @Override
    public void close() {
        pool.close();
    }

    /**
     * DATABASE_URL in libpq's URI form ({@code postgres://user[:password]@host[:port]/db[?params]})
     * as pgjdbc wants it: a {@code jdbc:postgresql:} URL, with the user and password apart so
     * that they need no escaping inside it. The query string is passed on as it is
     * ({@code sslmode=disable} means the same to both).
     */
    record ConnectionInfo(String jdbcUrl, String user, String password) {
        static ConnectionInfo parse(String databaseUrl) {
            URI uri;
            try {
                uri = new URI(databaseUrl);
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("DATABASE_URL is not a URL: " + e.getMessage());
            }
            String scheme = uri.getScheme();
            if (scheme == null || !(scheme.equals("postgres") || scheme.equals("postgresql"))) {
                throw new IllegalArgumentException("DATABASE_URL must start with postgres:// or postgresql://");
            }
            String host = uri.getHost(); // an IPv6 address keeps its brackets, as JDBC wants it
            if (host == null) {
                throw new IllegalArgumentException("DATABASE_URL has no host: " + scheme + "://...");
            }
            StringBuilder jdbc = new StringBuilder("jdbc:postgresql://").append(host);
            if (uri.getPort() != -1) {
                jdbc.append(':').append(uri.getPort());
            }
            String path = uri.getRawPath();
            jdbc.append(path == null || path.isEmpty() ? "/" : path);
            if (uri.getRawQuery() != null) {
                jdbc.append('?').append(uri.getRawQuery());
            }
            String user = null;
            String password = null;
            String userInfo = uri.getRawUserInfo();
            if (userInfo != null) {
                int colon = userInfo.indexOf(':');
                user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
                password = colon < 0 ? null : decode(userInfo.substring(colon + 1));
            }
            return new ConnectionInfo(jdbc.toString(), user, password);
        }

        /** Percent-decoding of a URL's user info, where a {@code +} is a plus, not a space. */
        private static String decode(String raw) {
            return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
        }

        /** Without the password, for messages. */
        @Override
        public String toString() {
            return jdbcUrl + (user == null ? "" : " as " + user);
        }
    }
}
