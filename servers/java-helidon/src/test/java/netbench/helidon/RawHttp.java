package netbench.helidon;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** A minimal HTTP/1.1 client over one socket, so tests see the exact status, headers and framing. */
final class RawHttp implements AutoCloseable {
    /** One answer: header names are lower-cased. */
    static final class Response {
        final int status;
        final Map<String, String> headers;
        final byte[] body;

        Response(int status, Map<String, String> headers, byte[] body) {
            this.status = status;
            this.headers = headers;
            this.body = body;
        }

        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    RawHttp(InetSocketAddress address) throws IOException {
        this(new Socket(address.getAddress(), address.getPort()));
    }

    /** Over a socket already open: a TLS socket for the tls listener's HTTP/1.1. */
    RawHttp(Socket connected) throws IOException {
        socket = connected;
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    void write(String raw) throws IOException {
        write(raw.getBytes(StandardCharsets.UTF_8));
    }

    void write(byte[] raw) throws IOException {
        out.write(raw);
        out.flush();
    }

    /** Bytes of an answer already received and not read yet. */
    int available() throws IOException {
        return in.available();
    }

    /** A request with extra header lines ({@code "Name: value\r\n"} each). */
    static String get(String path, String headers) {
        return "GET " + path + " HTTP/1.1\r\nHost: test\r\n" + headers + "\r\n";
    }

    static String post(String path, String headers, String body) {
        int length = body.getBytes(StandardCharsets.UTF_8).length;
        return "POST " + path + " HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n" + headers
                + "Content-Length: " + length + "\r\n\r\n" + body;
    }

    Response send(String raw) throws IOException {
        write(raw);
        return read();
    }

    static String get(String path) {
        return "GET " + path + " HTTP/1.1\r\nHost: test\r\n\r\n";
    }

    static String post(String path, String body) {
        int length = body.getBytes(StandardCharsets.UTF_8).length;
        return "POST " + path + " HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + length + "\r\n\r\n" + body;
    }

    /** Reads one answer, framed by Content-Length or by chunked transfer coding (trailers are skipped). */
    Response read() throws IOException {
        return read(false);
    }

    /** Reads one answer to a HEAD-like exchange or a 304: headers only, whatever they announce. */
    Response readHead() throws IOException {
        return read(true);
    }

    private Response read(boolean noBody) throws IOException {
        String statusLine = line();
        String[] parts = statusLine.split(" ", 3);
        if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
            throw new IOException("bad status line: " + statusLine);
        }
        int status = Integer.parseInt(parts[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String h = line(); !h.isEmpty(); h = line()) {
            int colon = h.indexOf(':');
            headers.put(h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
        }
        if (noBody) {
            return new Response(status, headers, new byte[0]);
        }
        String length = headers.get("content-length");
        String encoding = headers.get("transfer-encoding");
        if (encoding != null && encoding.toLowerCase(Locale.ROOT).endsWith("chunked")) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            for (int size = chunkSize(); size > 0; size = chunkSize()) {
                body.write(in.readNBytes(size));
                line(); // the CRLF after the chunk's data
            }
            for (String trailer = line(); !trailer.isEmpty(); trailer = line()) {
                // trailers are ignored
            }
            return new Response(status, headers, body.toByteArray());
        }
        if (length == null) {
            throw new IOException("answer framed by neither Content-Length nor chunked: " + headers);
        }
        byte[] body = in.readNBytes(Integer.parseInt(length));
        return new Response(status, headers, body);
    }

    private int chunkSize() throws IOException {
        String size = line();
        int semicolon = size.indexOf(';');
        return Integer.parseInt((semicolon < 0 ? size : size.substring(0, semicolon)).trim(), 16);
    }

    private String line() throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != '\n') {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            if (c != '\r') {
                buf.write(c);
            }
        }
        return buf.toString(StandardCharsets.ISO_8859_1);
    }

    /** True when the server has closed the connection (reads end of stream). */
    boolean closedByPeer() throws IOException {
        return in.read() < 0;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
