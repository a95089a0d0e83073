package netbench.netty;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /ws} against the running server: echoes through the JDK's own WebSocket client
 * (java.net.http), and what that client cannot send (an unmasked frame, a close with a given
 * code read back byte for byte) over a raw socket.
 */
class WsTest {
    private static Server server;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        server = Server.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Handler.Root.NOT_FOUND);
        client = HttpClient.newHttpClient();
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    private static int port() {
        return server.address().getPort();
    }

    record Pong(byte[] payload) {}

    record Closed(int status, String reason) {}

    /** Collects whole messages, pongs and the close, in the order they arrive. */
    static final class Collector implements WebSocket.Listener {
        final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
        private StringBuilder text = new StringBuilder();
        private ByteArrayOutputStream binary = new ByteArrayOutputStream();

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                events.add(text.toString());
                text = new StringBuilder();
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
            byte[] bytes = new byte[data.remaining()];
            data.get(bytes);
            binary.writeBytes(bytes);
            if (last) {
                events.add(binary.toByteArray());
                binary = new ByteArrayOutputStream();
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onPong(WebSocket ws, ByteBuffer message) {
            byte[] bytes = new byte[message.remaining()];
            message.get(bytes);
            events.add(new Pong(bytes));
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int status, String reason) {
            events.add(new Closed(status, reason));
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            events.add(error);
        }

        Object next() throws InterruptedException {
            Object event = events.poll(10, TimeUnit.SECONDS);
            if (event == null) {
                fail("no message from the server within 10 s");
            }
            if (event instanceof Throwable) {
                fail("WebSocket error", (Throwable) event);
            }
            return event;
        }
    }

    private static WebSocket open(Collector collector) {
        return client.newWebSocketBuilder()
                .buildAsync(URI.create("ws://127.0.0.1:" + port() + "/ws"), collector)
                .join();
    }

    private static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void echoesTextAndBinaryInOrder() throws Exception {
        Collector c = new Collector();
        WebSocket ws = open(c);
        String unicode = "héllo, wörld ✓ \uD83D\uDE00";
        String big = "x".repeat(65536);
        byte[] small = random(125, 1);
        byte[] medium = random(126, 2);
        byte[] large = random(65536, 3);
        ws.sendText("hello", true).join();
        ws.sendText("", true).join();
        ws.sendText(unicode, true).join();
        ws.sendBinary(ByteBuffer.wrap(small), true).join();
        ws.sendBinary(ByteBuffer.wrap(medium), true).join();
        ws.sendBinary(ByteBuffer.wrap(new byte[0]), true).join();
        ws.sendText(big, true).join();
        ws.sendBinary(ByteBuffer.wrap(large), true).join();
        assertEquals("hello", c.next());
        assertEquals("", c.next());
        assertEquals(unicode, c.next());
        assertArrayEquals(small, (byte[]) c.next());
        assertArrayEquals(medium, (byte[]) c.next());
        assertArrayEquals(new byte[0], (byte[]) c.next());
        assertEquals(big, c.next());
        assertArrayEquals(large, (byte[]) c.next());
        ws.sendClose(WebSocket.NORMAL_CLOSURE, "done").join();
        assertEquals(WebSocket.NORMAL_CLOSURE, ((Closed) c.next()).status());
    }

    @Test
    void pingGetsPongWithItsPayload() throws Exception {
        Collector c = new Collector();
        WebSocket ws = open(c);
        byte[] payload = "are you there?".getBytes(StandardCharsets.US_ASCII);
        ws.sendPing(ByteBuffer.wrap(payload)).join();
        assertArrayEquals(payload, ((Pong) c.next()).payload());
        ws.sendPing(ByteBuffer.allocate(0)).join();
        assertArrayEquals(new byte[0], ((Pong) c.next()).payload());
        ws.sendClose(WebSocket.NORMAL_CLOSURE, "").join();
    }

    @Test
    void fragmentedMessageIsEchoedWholeAfterThePong() throws Exception {
        Collector c = new Collector();
        WebSocket ws = open(c);
        ws.sendText("frag", false).join();
        ws.sendPing(ByteBuffer.wrap(new byte[] {1, 2, 3})).join();
        ws.sendText("men", false).join();
        ws.sendText("ted", true).join();
        assertArrayEquals(new byte[] {1, 2, 3}, ((Pong) c.next()).payload());
        assertEquals("fragmented", c.next());
        byte[] whole = random(3000, 4);
        ws.sendBinary(ByteBuffer.wrap(whole, 0, 1000), false).join();
        ws.sendBinary(ByteBuffer.wrap(whole, 1000, 1000), false).join();
        ws.sendBinary(ByteBuffer.wrap(whole, 2000, 1000), true).join();
        assertArrayEquals(whole, (byte[]) c.next());
        ws.sendClose(WebSocket.NORMAL_CLOSURE, "").join();
    }

    @Test
    void manyClientsAtOnce() throws Exception {
        Collector[] collectors = new Collector[8];
        WebSocket[] sockets = new WebSocket[collectors.length];
        for (int i = 0; i < collectors.length; i++) {
            collectors[i] = new Collector();
            sockets[i] = open(collectors[i]);
        }
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < sockets.length; i++) {
                sockets[i].sendText("client " + i + " round " + round, true).join();
            }
            for (int i = 0; i < sockets.length; i++) {
                assertEquals("client " + i + " round " + round, collectors[i].next());
            }
        }
        for (WebSocket ws : sockets) {
            ws.sendClose(WebSocket.NORMAL_CLOSURE, "").join();
        }
    }

    // ---- raw socket: what the JDK client will not do ----

    /** A client connection after a hand-written handshake; headers lower-cased. */
    static final class RawWs implements AutoCloseable {
        final Socket socket;
        final DataInputStream in;
        final OutputStream out;
        final int status;
        final Map<String, String> headers = new LinkedHashMap<>();
        final String key;

        RawWs(String extraHeaders) throws IOException {
            this(extraHeaders, false);
        }

        /** With {@code blankFirst}, the connection serves a GET /blank before the upgrade. */
        RawWs(String extraHeaders, boolean blankFirst) throws IOException {
            socket = new Socket(InetAddress.getLoopbackAddress(), port());
            socket.setSoTimeout(10_000);
            socket.setTcpNoDelay(true);
            in = new DataInputStream(socket.getInputStream());
            out = socket.getOutputStream();
            if (blankFirst) {
                out.write(RawHttp.get("/blank").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                assertTrue(line(in).startsWith("HTTP/1.1 200"));
                int length = -1;
                for (String h = line(in); !h.isEmpty(); h = line(in)) {
                    if (h.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                        length = Integer.parseInt(h.substring(h.indexOf(':') + 1).trim());
                    }
                }
                assertEquals("OK", new String(in.readNBytes(length), StandardCharsets.US_ASCII));
            }
            key = Base64.getEncoder().encodeToString(random(16, System.nanoTime()));
            out.write(("GET /ws HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n" + extraHeaders + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String statusLine = line(in);
            status = Integer.parseInt(statusLine.split(" ")[1]);
            for (String h = line(in); !h.isEmpty(); h = line(in)) {
                int colon = h.indexOf(':');
                headers.put(h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
            }
        }

        /** One client frame, masked or not, FIN set. */
        void send(int opcode, byte[] payload, boolean masked) throws IOException {
            ByteArrayOutputStream f = new ByteArrayOutputStream();
            f.write(0x80 | opcode);
            int maskBit = masked ? 0x80 : 0;
            if (payload.length < 126) {
                f.write(maskBit | payload.length);
            } else {
                f.write(maskBit | 126);
                f.write(payload.length >> 8);
                f.write(payload.length & 0xff);
            }
            byte[] body = payload.clone();
            if (masked) {
                byte[] mask = random(4, System.nanoTime());
                f.writeBytes(mask);
                for (int i = 0; i < body.length; i++) {
                    body[i] ^= mask[i % 4];
                }
            }
            f.writeBytes(body);
            out.write(f.toByteArray());
            out.flush();
        }

        /** The next server frame as {opcode, payload...}, or null at the end of the stream. */
        Object[] read() throws IOException {
            int b0;
            try {
                b0 = in.read();
            } catch (SocketException e) {
                return null; // reset by the server: the connection is over just the same
            }
            if (b0 < 0) {
                return null;
            }
            int b1 = in.readUnsignedByte();
            assertEquals(0, b1 & 0x80, "server frames are not masked");
            long length = b1 & 0x7f;
            if (length == 126) {
                length = in.readUnsignedShort();
            } else if (length == 127) {
                length = in.readLong();
            }
            byte[] payload = new byte[(int) length];
            in.readFully(payload);
            return new Object[] {b0 & 0x0f, payload};
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }

        private static String line(InputStream in) throws IOException {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            int c;
            while ((c = in.read()) != '\n') {
                if (c < 0) {
                    throw new EOFException("connection closed in the handshake");
                }
                if (c != '\r') {
                    buf.write(c);
                }
            }
            return buf.toString(StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void handshakeAcceptsAndOffersNoExtension() throws Exception {
        try (RawWs ws = new RawWs("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n")) {
            assertEquals(101, ws.status);
            assertEquals("websocket", ws.headers.get("upgrade").toLowerCase(Locale.ROOT));
            assertEquals("upgrade", ws.headers.get("connection").toLowerCase(Locale.ROOT));
            byte[] sha1 = MessageDigest.getInstance("SHA-1").digest(
                    (ws.key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").getBytes(StandardCharsets.US_ASCII));
            assertEquals(Base64.getEncoder().encodeToString(sha1), ws.headers.get("sec-websocket-accept"));
            assertNull(ws.headers.get("sec-websocket-extensions"));
            assertNull(ws.headers.get("sec-websocket-protocol"));
            ws.send(0x1, "raw".getBytes(StandardCharsets.US_ASCII), true);
            Object[] frame = ws.read();
            assertEquals(0x1, frame[0]);
            assertArrayEquals("raw".getBytes(StandardCharsets.US_ASCII), (byte[]) frame[1]);
        }
    }

    @Test
    void closeIsAnsweredWithTheSameCodeThenTheConnectionEnds() throws Exception {
        try (RawWs ws = new RawWs("")) {
            assertEquals(101, ws.status);
            ws.send(0x8, new byte[] {0x0f, (byte) 0xa0, 'b', 'y', 'e'}, true); // 4000
            Object[] frame = ws.read();
            assertEquals(0x8, frame[0]);
            byte[] payload = (byte[]) frame[1];
            assertTrue(payload.length >= 2);
            assertEquals(4000, ((payload[0] & 0xff) << 8) | (payload[1] & 0xff));
            assertNull(ws.read(), "the server closes the connection after its close");
        }
    }

    @Test
    void unmaskedFrameClosesTheConnectionWithoutAnEcho() throws Exception {
        try (RawWs ws = new RawWs("")) {
            assertEquals(101, ws.status);
            ws.send(0x1, "unmasked".getBytes(StandardCharsets.US_ASCII), false);
            for (Object[] frame = ws.read(); frame != null; frame = ws.read()) {
                assertEquals(0x8, frame[0], "only a close may come back, never an echo");
                byte[] payload = (byte[]) frame[1];
                if (payload.length >= 2) {
                    assertEquals(1002, ((payload[0] & 0xff) << 8) | (payload[1] & 0xff));
                }
            }
        }
    }

    @Test
    void upgradeAfterHttpOnTheSameConnection() throws Exception {
        try (RawWs ws = new RawWs("", true)) {
            assertEquals(101, ws.status);
            ws.send(0x2, new byte[] {0, 1, 2}, true);
            Object[] frame = ws.read();
            assertEquals(0x2, frame[0]);
            assertArrayEquals(new byte[] {0, 1, 2}, (byte[]) frame[1]);
        }
    }

    /** Without an upgrade /ws is an unknown path like any other: 404, framed and dated, kept alive. */
    @Test
    void wsWithoutUpgradeIsAnOrdinaryNotFound() throws Exception {
        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), port()))) {
            for (String raw : new String[] {RawHttp.get("/ws"), RawHttp.post("/ws", "{}"), RawHttp.get("/ws/x"),
                RawHttp.get("/wsx"), RawHttp.get("/ws?x=1")}) {
                RawHttp.Response r = http.send(raw);
                assertEquals(404, r.status, raw);
                assertNotNull(r.header("date"));
            }
            assertEquals("OK", http.send(RawHttp.get("/blank")).text());
        }
    }
}
