package netbench.helidon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.webserver.WebServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The fortunes page's rendering, without a database. */
class FortunesTest {
    static final String SCRIPT = "<script>alert(\"This should not be displayed in a browser alert box.\");</script>";

    /** contract/db/schema.sql's twelve rows, in id order. */
    static List<Fortune> seeded() {
        return List.of(
                new Fortune(1, "fortune: No such file or directory"),
                new Fortune(2, "A computer scientist is someone who fixes things that aren't broken."),
                new Fortune(3, "After enough decimal places, nobody gives a damn."),
                new Fortune(4, "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"),
                new Fortune(5, "A computer program does what you tell it to do, not what you want it to do."),
                new Fortune(6, "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen"),
                new Fortune(7, "Any program that runs right is obsolete."),
                new Fortune(8, "A list is only as strong as its weakest link. — Donald Knuth"),
                new Fortune(9, "Feature: A bug with seniority."),
                new Fortune(10, "Computers make very fast, very accurate mistakes."),
                new Fortune(11, SCRIPT),
                new Fortune(12, "フレームワークのベンチマーク"));
    }

    private static final Pattern ROW = Pattern.compile("<tr><td>(.*?)</td><td>(.*?)</td></tr>", Pattern.DOTALL);
    private static final Pattern REF = Pattern.compile("&(#[0-9]+|#x[0-9a-fA-F]+|[a-z]+);");

    /** The page's table rows, each cell's text decoded as the contract reads it back. */
    static List<Fortune> rows(String page) {
        List<Fortune> rows = new ArrayList<>();
        Matcher m = ROW.matcher(page);
        while (m.find()) {
            String message = m.group(2);
            assertFalse(message.contains("<"), "a raw < in a cell: " + message);
            rows.add(new Fortune(Integer.parseInt(decode(m.group(1)).trim()), decode(message)));
        }
        return rows;
    }

    static String decode(String cell) {
        Matcher m = REF.matcher(cell);
        StringBuilder out = new StringBuilder();
        int at = 0;
        while (m.find()) {
            out.append(cell, at, m.start());
            String ref = m.group(1);
            int cp;
            if (ref.startsWith("#x")) {
                cp = Integer.parseInt(ref.substring(2), 16);
            } else if (ref.startsWith("#")) {
                cp = Integer.parseInt(ref.substring(1));
            } else {
                switch (ref) {
                    case "lt": cp = '<'; break;
                    case "gt": cp = '>'; break;
                    case "amp": cp = '&'; break;
                    case "quot": cp = '"'; break;
                    case "apos": cp = '\''; break;
                    case "nbsp": cp = 0xA0; break;
                    default: throw new AssertionError("unknown reference &" + ref + ";");
                }
            }
            out.appendCodePoint(cp);
            at = m.end();
        }
        int amp = cell.indexOf('&', at);
        assertEquals(-1, amp, "a & that starts no reference: " + cell);
        return out.append(cell, at, cell.length()).toString();
    }

    /** The rows plus the added one, sorted by message: what the page must show. */
    static List<Fortune> expected(List<Fortune> read) {
        List<Fortune> all = new ArrayList<>(read);
        all.add(new Fortune(0, Fortunes.ADDED));
        all.sort(Fortunes.BY_MESSAGE);
        return all;
    }

    @Test
    void theSeededPage() {
        String page = new String(Fortunes.render(seeded()), StandardCharsets.UTF_8);
        assertTrue(page.startsWith("<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"
                + "<tr><th>id</th><th>message</th></tr>"
                + "<tr><td>11</td><td>&lt;script&gt;alert(&quot;This should not be displayed in a browser alert box.&quot;);"
                + "&lt;/script&gt;</td></tr><tr><td>4</td>"), page);
        assertTrue(page.strip().endsWith("<tr><td>12</td><td>フレームワークのベンチマーク</td></tr></table></body></html>"), page);
        assertFalse(page.contains("<script>"));
        List<Fortune> rows = rows(page);
        assertEquals(13, rows.size());
        assertEquals(expected(seeded()), rows);
        assertEquals(new Fortune(0, Fortunes.ADDED), rows.get(5));
    }

    /** Markup, references and a newline come back as they were: escaped by the engine, never passed through. */
    @Test
    void escapesEverything() {
        List<Fortune> read = new ArrayList<>(seeded());
        read.add(new Fortune(42, "netbench verify 7: <b>bold</b> & \"quoted\" 'too' </td></tr>"));
        read.add(new Fortune(43, "already escaped: &amp; &lt;b&gt; &#60; &#x3c; and a\nnewline"));
        read.add(new Fortune(44, "= ` / \\ \u00a0"));
        List<Fortune> rows = rows(new String(Fortunes.render(read), StandardCharsets.UTF_8));
        assertEquals(expected(read), rows);
    }

    @Test
    void theRowsAreNotChanged() {
        List<Fortune> read = new ArrayList<>(seeded());
        Fortunes.render(read);
        assertEquals(seeded(), read);
    }

    @Test
    void codePointOrder() {
        String bmpHigh = "\uff61";              // U+FF61
        String astral = "\ud83d\ude00";         // U+1F600, below U+FF61 in UTF-16 units
        assertTrue(bmpHigh.compareTo(astral) > 0);
        assertTrue(Fortunes.compareCodePoints(bmpHigh, astral) < 0);
        assertTrue(Fortunes.compareCodePoints(astral, bmpHigh) > 0);
        assertTrue(Fortunes.compareCodePoints("\ud83d\ude00", "\ud83d\ude01") < 0);
        assertTrue(Fortunes.compareCodePoints("a", "ab") < 0);
        assertEquals(0, Fortunes.compareCodePoints("フ", "フ"));
        assertTrue(Fortunes.compareCodePoints("B", "a") < 0);
        assertTrue(Fortunes.compareCodePoints("\ue000", "\ud800\udc00") < 0);
    }

    /** Without DATABASE_URL every database path answers 503; another method is Helidon's 404. */
    @Test
    void withoutDatabase() throws Exception {
        WebServer server = Server.start("127.0.0.1", 0, Routes.Root.NOT_FOUND);
        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()))) {
            for (String path : new String[] {"/fortunes", "/db?id=1", "/db/list?from=1", "/queries?queries=2", "/updates"}) {
                assertEquals(503, http.send(RawHttp.get(path)).status, path);
            }
            assertEquals(404, http.send(RawHttp.post("/fortunes", "{}")).status);
        } finally {
            server.stop();
        }
    }
}
