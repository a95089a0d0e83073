package netbench.helidon;

import io.helidon.http.DateTime;
import io.helidon.http.Header;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.ServerResponseHeaders;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Optional;

/**
 * HTTP dates as IMF-fixdates ({@code Sun, 06 Nov 1994 08:49:37 GMT}, RFC 9110 §5.6.7).
 *
 * <p>Helidon 4.5.0 writes its {@code Date} header and the static content feature's
 * {@code Last-Modified} with java.time's {@code DateTimeFormatter.RFC_1123_DATE_TIME}
 * ({@link DateTime#RFC_1123_DATE_TIME}) in the JVM's default time zone: that formatter writes
 * the day of the month with one digit on the 1st to the 9th ({@code Fri, 6 Nov 2026}), and an
 * offset such as {@code +0100} instead of {@code GMT} outside UTC, neither of which is an
 * IMF-fixdate. Helidon writes its own {@code Date} only when the answer has none, so the
 * routing's filter sets this one, formatted once a second; {@code Last-Modified} is rewritten
 * just before a static file's answer goes out.
 */
final class HttpDate {
    static final DateTimeFormatter IMF_FIXDATE = DateTimeFormatter
            .ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
            .withZone(ZoneOffset.UTC);

    /** The Date header of one second. */
    private record Cached(long second, Header header) {}

    private static volatile Cached cached = new Cached(Long.MIN_VALUE, null);

    private HttpDate() {}

    /** The current time's Date header, formatted when the second changes. */
    static Header now() {
        long second = Math.floorDiv(System.currentTimeMillis(), 1000L);
        Cached c = cached;
        if (c.second() != second) {
            c = new Cached(second, HeaderValues.create(HeaderNames.DATE, true, false,
                    IMF_FIXDATE.format(Instant.ofEpochSecond(second))));
            cached = c; // a race only formats the same second twice
        }
        return c.header();
    }

    /** Rewrites a {@code Last-Modified} in Helidon's spelling as an IMF-fixdate (the same instant). */
    static void fixLastModified(ServerResponseHeaders headers) {
        Optional<String> value = headers.first(HeaderNames.LAST_MODIFIED);
        if (value.isEmpty()) {
            return;
        }
        try {
            ZonedDateTime t = ZonedDateTime.parse(value.get(), DateTimeFormatter.RFC_1123_DATE_TIME);
            headers.set(HeaderValues.create(HeaderNames.LAST_MODIFIED, IMF_FIXDATE.format(t)));
        } catch (DateTimeParseException e) {
            // not Helidon's spelling: left as it is
        }
    }
}
