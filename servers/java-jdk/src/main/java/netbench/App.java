package netbench;

import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * app's page: {@code K} read from the query, the 50 item rows of page {@code K} (the contract's
 * formula), and the page rendered by mustache.java from src/main/resources/app.mustache, whose
 * {@code {{ }}} values (the labels) are HTML-escaped by the engine and whose {@code {{{ }}}}
 * ones, contract/app's stylesheet and script, go in as they are.
 */
final class App {
    static final int MAX_PAGE = 100_000;
    static final int ROWS = 50;
    /** Text the template must escape: {@code &}, markup, both quotes, {@code <} and {@code >}. */
    static final List<String> LABELS = List.of(
            "Tom & Jerry's cheese board",
            "<b>bold</b> move of the week",
            "\"Quoted\" goods, boxed",
            "O'Brien's pick for winter",
            "a < b > c, the ordered set");

    /** Compiled once; a compiled Mustache is safe to run from many threads. */
    private static final Mustache PAGE = new DefaultMustacheFactory().compile("app.mustache");

    /** Null when contract/app was not found at start-up: {@code /app} then answers 503. */
    private final String css;
    private final String js;
    final Sessions sessions = new Sessions();

    private App(String css, String js) {
        this.css = css;
        this.js = js;
    }

    /**
     * Reads app.css and app.js from {@code dir} (../../contract/app from the server's folder) once,
     * at start-up; without them the app has no page.
     */
    static App of(Path dir) {
        try {
            return new App(Files.readString(dir.resolve("app.css"), StandardCharsets.UTF_8),
                    Files.readString(dir.resolve("app.js"), StandardCharsets.UTF_8));
        } catch (IOException e) {
            return none();
        }
    }

    static App none() {
        return new App(null, null);
    }

    boolean present() {
        return css != null;
    }

    /** {@code page} of {@code /app}: 1 to 100,000, plain decimal digits. */
    static int page(String rawQuery) throws BadRequest {
        String value = DbParams.param(rawQuery, "page");
        if (value == null) {
            throw new BadRequest("page: missing");
        }
        int k = DbParams.int32(value, "page");
        if (k < 1 || k > MAX_PAGE) {
            throw new BadRequest("page: not from 1 to " + MAX_PAGE);
        }
        return k;
    }

    /** One item row as the page shows it; the label is escaped by the template, not here. */
    record Row(int number, String item, int quantity, String price, String total) {}

    /** What the template sees. */
    record View(int page, int visits, long since, String css, String js, List<Row> rows) {}

    /** Page {@code k}'s rows, in integer arithmetic (every value fits 32 bits). */
    static List<Row> rows(int k) {
        List<Row> rows = new ArrayList<>(ROWS);
        for (int i = 1; i <= ROWS; i++) {
            int quantity = (k * 7 + i * 13) % 100 + 1;
            int cents = (k * 7919 + i * 104729) % 100_000;
            rows.add(new Row((k - 1) * ROWS + i, LABELS.get((k + i) % LABELS.size()) + ", no. " + k + "." + i,
                    quantity, money(cents), money(quantity * cents)));
        }
        return rows;
    }

    /** Cents written as units, a dot and two digits, without a float on the way. */
    static String money(int cents) {
        int rest = cents % 100;
        return (cents / 100) + (rest < 10 ? ".0" : ".") + rest;
    }

    /** The page, rendered for this request: the caller holds the session's lock. */
    byte[] render(int k, int visits, long since) {
        StringWriter page = new StringWriter(12 * 1024);
        try {
            PAGE.execute(page, new View(k, visits, since, css, js, rows(k))).flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return page.toString().getBytes(StandardCharsets.UTF_8);
    }
}
