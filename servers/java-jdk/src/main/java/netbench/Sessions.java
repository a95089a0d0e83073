package netbench;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntFunction;

/**
 * app's sessions, kept in this process's memory: the JDK server has no session store of its
 * own (com.sun.net.httpserver has no sessions and no cookies), so this is the small one every
 * framework has: a concurrent map from id to session, each session with its own lock.
 */
final class Sessions {
    static final String COOKIE = "sid";
    /** Sessions idle this long may go (the contract: never sooner). */
    static final long IDLE_MILLIS = TimeUnit.MINUTES.toMillis(10);
    private static final long SWEEP_MILLIS = TimeUnit.MINUTES.toMillis(1);

    private final SecureRandom random = new SecureRandom();
    private final ConcurrentHashMap<String, Session> live = new ConcurrentHashMap<>();
    private final AtomicLong nextSweep = new AtomicLong(System.currentTimeMillis() + SWEEP_MILLIS);

    /** One browser's state. */
    static final class Session {
        final String id;
        /** Milliseconds since the Unix epoch at creation. */
        final long since;
        /**
         * A ReentrantLock rather than synchronized: the same code runs on virtual threads in
         * java-helidon, where a monitor held while rendering would pin the carrier (JDK 21).
         */
        private final ReentrantLock lock = new ReentrantLock();
        private int visits; // guarded by lock
        private volatile long lastSeen;

        Session(String id, long now) {
            this.id = id;
            this.since = now;
            this.lastSeen = now;
        }

        /**
         * Counts this visit and runs {@code render} with the new count, all under the session's
         * lock, so two requests on one session never see the same count.
         */
        <T> T visit(IntFunction<T> render) {
            lock.lock();
            try {
                visits++;
                return render.apply(visits);
            } finally {
                lock.unlock();
            }
        }
    }

    /** The live session named {@code id}, or null (no id, never made, ended, idle too long). */
    Session find(String id) {
        if (id == null) {
            return null;
        }
        Session s = live.get(id);
        if (s == null) {
            return null;
        }
        long now = System.currentTimeMillis();
        if (now - s.lastSeen > IDLE_MILLIS) {
            live.remove(id, s);
            return null;
        }
        s.lastSeen = now;
        return s;
    }

    /** A new session under a fresh id: 128 bits from SecureRandom, never one a client sent. */
    Session create() {
        long now = System.currentTimeMillis();
        sweep(now);
        byte[] bits = new byte[16];
        while (true) {
            random.nextBytes(bits);
            Session s = new Session(HexFormat.of().formatHex(bits), now);
            if (live.putIfAbsent(s.id, s) == null) {
                return s;
            }
        }
    }

    /** Logout: the session is gone whether or not it was there. */
    void end(String id) {
        if (id != null) {
            live.remove(id);
        }
    }

    int size() {
        return live.size();
    }

    /** At most once a minute, on some creation, the idle sessions go: no thread of its own. */
    private void sweep(long now) {
        long due = nextSweep.get();
        if (now < due || !nextSweep.compareAndSet(due, now + SWEEP_MILLIS)) {
            return;
        }
        live.values().removeIf(s -> now - s.lastSeen > IDLE_MILLIS);
    }

    /** The value of cookie {@code sid} in the request's Cookie header lines, or null. */
    static String cookie(List<String> header) {
        if (header == null) {
            return null;
        }
        for (String line : header) {
            for (String pair : line.split(";")) {
                int eq = pair.indexOf('=');
                if (eq > 0 && pair.substring(0, eq).trim().equals(COOKIE)) {
                    return pair.substring(eq + 1).trim();
                }
            }
        }
        return null;
    }

    /** The Set-Cookie of a new session. */
    static String setCookie(Session s) {
        return COOKIE + "=" + s.id + "; Path=/; HttpOnly";
    }

    /** The Set-Cookie of a logout: the browser drops the cookie. */
    static String clearCookie() {
        return COOKIE + "=; Path=/; Max-Age=0; HttpOnly";
    }
}
