package netbench.helidon;

import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /fortunes} (TechEmpower's fortunes): the rows read for the request, one more added,
 * sorted by message, rendered by mustache.java from src/main/resources/fortunes.mustache, whose
 * {@code {{message}}} is HTML-escaped by the engine (its HtmlEscaper). Helidon SE has no template
 * engine of its own.
 */
final class Fortunes {
    static final String ADDED = "Additional fortune added at request time.";

    /** Compiled once; a compiled Mustache is safe to run from many threads. */
    private static final Mustache PAGE = new DefaultMustacheFactory().compile("fortunes.mustache");

    /** By code point, as the contract sorts (String.compareTo compares UTF-16 units). */
    static final Comparator<Fortune> BY_MESSAGE = (a, b) -> compareCodePoints(a.message(), b.message());

    private Fortunes() {}

    /** The page for the rows read: the added row joins them, and all are sorted by message. */
    static byte[] render(List<Fortune> read) {
        List<Fortune> rows = new ArrayList<>(read.size() + 1);
        rows.addAll(read);
        rows.add(new Fortune(0, ADDED));
        rows.sort(BY_MESSAGE);
        StringWriter page = new StringWriter(2048);
        try {
            PAGE.execute(page, Map.of("fortunes", rows)).flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return page.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Code point order of two well-formed UTF-16 strings: UTF-16 order, except that surrogates
     * (U+D800..DFFF, which only stand for code points above U+FFFF) rank above U+E000..FFFF.
     * The rows come from PostgreSQL text, which holds no lone surrogate.
     */
    static int compareCodePoints(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            int x = a.charAt(i);
            int y = b.charAt(i);
            if (x != y) {
                if (x >= 0xD800 && y >= 0xD800) {
                    x += x >= 0xE000 ? -0x800 : 0x2000;
                    y += y >= 0xE000 ? -0x800 : 0x2000;
                }
                return x - y;
            }
        }
        return a.length() - b.length();
    }
}
