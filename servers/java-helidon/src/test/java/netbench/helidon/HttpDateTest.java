package netbench.helidon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.http.DateTime;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.ServerResponseHeaders;
import io.helidon.webserver.WebServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import org.junit.jupiter.api.Test;

/** Date and Last-Modified as IMF-fixdates, where Helidon 4.5.0's own spelling is not one. */
class HttpDateTest {
    private static final Instant SIXTH = Instant.parse("1994-11-06T08:49:37Z");

    @Test
    void imfFixdate() {
        assertEquals("Sun, 06 Nov 1994 08:49:37 GMT", HttpDate.IMF_FIXDATE.format(SIXTH));
        assertEquals("Sat, 31 Dec 2022 23:59:59 GMT", HttpDate.IMF_FIXDATE.format(Instant.parse("2022-12-31T23:59:59.999Z")));
    }

    /** Why HttpDate exists: the formatter Helidon writes its dates with drops the day's leading zero. */
    @Test
    void helidonsFormatterIsNotAnImfFixdate() {
        assertEquals("Sun, 6 Nov 1994 08:49:37 GMT", ZonedDateTime.ofInstant(SIXTH, ZoneId.of("UTC")).format(DateTime.RFC_1123_DATE_TIME));
        assertEquals("Sun, 6 Nov 1994 09:49:37 +0100",
                ZonedDateTime.ofInstant(SIXTH, ZoneId.of("Europe/Paris")).format(DateTime.RFC_1123_DATE_TIME));
    }

    @Test
    void dateIsAnImfFixdate() {
        String value = HttpDate.now().value();
        assertEquals(29, value.length(), value);
        assertTrue(value.endsWith(" GMT"), value);
        assertEquals(value, HttpDate.IMF_FIXDATE.format(HttpDate.IMF_FIXDATE.parse(value, Instant::from)));
    }

    @Test
    void lastModifiedRespelled() {
        for (ZoneId zone : new ZoneId[] {ZoneId.of("UTC"), ZoneId.of("Europe/Paris"), ZoneId.of("America/New_York")}) {
            ServerResponseHeaders headers = ServerResponseHeaders.create();
            headers.set(HeaderValues.create(HeaderNames.LAST_MODIFIED,
                    ZonedDateTime.ofInstant(SIXTH, zone).format(DateTime.RFC_1123_DATE_TIME)));
            HttpDate.fixLastModified(headers);
            assertEquals("Sun, 06 Nov 1994 08:49:37 GMT", headers.first(HeaderNames.LAST_MODIFIED).orElseThrow(), zone.toString());
        }
        ServerResponseHeaders none = ServerResponseHeaders.create();
        HttpDate.fixLastModified(none);
        assertTrue(none.first(HeaderNames.LAST_MODIFIED).isEmpty());
    }

    /** Every answer, Helidon's own 404 included, carries the filter's Date. */
    @Test
    void everyAnswerHasOne() throws Exception {
        WebServer server = Server.start("127.0.0.1", 0, Routes.Root.NOT_FOUND);
        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()))) {
            for (String path : new String[] {"/blank", "/nope", "/echo/x"}) {
                RawHttp.Response r = http.send(RawHttp.get(path));
                String date = r.header("date");
                assertEquals(29, date.length(), path + ": " + date);
                Instant t = HttpDate.IMF_FIXDATE.parse(date, Instant::from);
                assertTrue(Math.abs(t.getEpochSecond() - Instant.now().getEpochSecond()) <= 2, date);
            }
        } finally {
            server.stop();
        }
    }

    @Test
    void sameObjectWithinTheSecond() {
        // formatted once per second: two calls in a row mostly return the very same header
        int same = 0;
        for (int i = 0; i < 10; i++) {
            if (HttpDate.now() == HttpDate.now()) {
                same++;
            }
        }
        assertTrue(same >= 8, "the header is cached: " + same);
        assertSame(HttpDate.now().headerName(), HeaderNames.DATE);
    }
}
