package netbench.netty;

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
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code GET /db}, {@code GET /db/list}, {@code GET /fortunes}, {@code GET /queries} and
 * {@code GET /updates}: every request borrows a connection from HikariCP and runs prepared
 * statements on PostgreSQL through the JDBC driver (pgjdbc), so an answer always shows the
 * tables as they are now.
 *
 * <p>JDBC blocks, and an event loop must not: the queries run on {@link #executor()}, a fixed
 * pool of as many threads as the pool has connections (a thread more would only wait for a
 * connection), and {@link Handler} writes the answer back on the connection's event loop.
 */
final class Db implements AutoCloseable {
    static final String ROW = "SELECT " + Item.COLUMNS + " FROM items WHERE id = ?";
    static final String LIST = "SELECT " + Item.COLUMNS + " FROM items WHERE id >= ? ORDER BY id LIMIT ?";
    /** The contract's floor for DATABASE_POOL_SIZE, for a run by hand that does not set it. */
    static final int DEFAULT_POOL_SIZE = 4;

    /** Plain BigDecimal text, so a price can never come out as 1E+2. */
    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
            .build();

    private final HikariDataSource pool;
    private final ExecutorService executor;

    private Db(HikariDataSource pool) {
        this.pool = pool;
        AtomicInteger n = new AtomicInteger();
        this.executor = Executors.newFixedThreadPool(pool.getMaximumPoolSize(), r -> {
            Thread t = new Thread(r, "db-" + n.incrementAndGet());
            t.setDaemon(true); // a query in flight does not keep the JVM from exiting on SIGTERM
            return t;
        });
    }

    /** Where the blocking queries run. */
    ExecutorService executor() {
        return executor;
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
            size = Integer.parseInt(value);
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
        return item == null ? null : render(item);
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
        // Rendered after the connection is back in the pool: it is held only for the query.
        return render(items);
    }

    /** Every row of the fortune table, in the order PostgreSQL returns them. */
    List<Fortune> fortunes() throws SQLException {
        List<Fortune> rows = new ArrayList<>(16);
        try (Connection c = pool.getConnection();
                PreparedStatement st = c.prepareStatement(Fortunes.QUERY);
                ResultSet rs = st.executeQuery()) {
            while (rs.next()) {
                rows.add(new Fortune(rs.getInt(1), rs.getString(2)));
            }
        }
        return rows;
    }

    /** {@code n} random world rows, each read with its own execution of the prepared statement. */
    World[] queries(int n) throws SQLException {
        try (Connection c = pool.getConnection()) {
            return read(c, n);
        }
    }

    /**
     * {@code n} random world rows, each read with its own query, each given a new random number,
     * written back with one UPDATE per row sent as one JDBC batch (one round trip). The answer
     * keeps the order drawn; the batch goes in id order, so that two concurrent batches (each one
     * implicit transaction) lock their rows in the same order and cannot deadlock. An id drawn
     * twice is written twice, the later number last.
     */
    World[] updates(int n) throws SQLException {
        try (Connection c = pool.getConnection()) {
            World[] rows = read(c, n);
            for (int i = 0; i < rows.length; i++) {
                rows[i] = new World(rows[i].id(), World.random());
            }
            World[] byId = rows.clone();
            Arrays.sort(byId, Comparator.comparingInt(World::id)); // stable: repeats keep their order
            try (PreparedStatement st = c.prepareStatement(World.WRITE)) {
                for (World w : byId) {
                    st.setInt(1, w.randomNumber());
                    st.setInt(2, w.id());
                    st.addBatch();
                }
                st.executeBatch();
            }
            return rows;
        }
    }

    private static World[] read(Connection c, int n) throws SQLException {
        World[] rows = new World[n];
        try (PreparedStatement st = c.prepareStatement(World.READ)) {
            for (int i = 0; i < n; i++) {
                st.setInt(1, World.random());
                try (ResultSet rs = st.executeQuery()) {
                    if (!rs.next()) {
                        throw new SQLException("no world row with the id drawn"); // the table is 1..10000
                    }
                    rows[i] = new World(rs.getInt(1), rs.getInt(2));
                }
            }
        }
        return rows;
    }

    static byte[] render(Item item) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            item.write(g);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return out.toByteArray();
    }

    static byte[] render(List<Item> items) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 + 160 * items.size());
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartArray();
            for (Item item : items) {
                item.write(g);
            }
            g.writeEndArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    @Override
    public void close() {
        executor.shutdownNow();
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
