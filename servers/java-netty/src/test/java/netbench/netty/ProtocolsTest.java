package netbench.netty;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.io.ByteArrayInputStream;
import java.io.FileInputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import netbench.WorkGrpc;
import netbench.WorkOuterClass.Group;
import netbench.WorkOuterClass.WorkReply;
import netbench.WorkOuterClass.WorkRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Contract 1.5: the TLS listener (HTTP/1.1 and h2 by ALPN), h2c with prior knowledge, and gRPC. */
class ProtocolsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private static final String EXAMPLE = "{\"product\":\"WidgetPro-7\",\"requestId\":\"5f0c6a3e\",\"group\":{"
            + "\"kind\":\"retail\",\"default\":true,\"balance\":1234.56,\"dates\":[\"2020-01-12T10:53:17.773Z\","
            + "\"2019-03-01T00:00:00.000Z\",\"2021-07-30T23:59:59.999Z\"]}}";
    private static final String EXAMPLE_ANSWER = "{\"product\":\"WidgetPro-7\",\"requestId\":\"5f0c6a3e\","
            + "\"client\":{\"balance\":1234.56,\"minDate\":\"2019-03-01T00:00:00.000Z\","
            + "\"maxDate\":\"2021-07-30T23:59:59.999Z\"}}";

    @TempDir
    static Path dir;
    private static TestCert cert;
    private static Server server;
    private static byte[] file;

    @BeforeAll
    static void start() throws Exception {
        cert = TestCert.make();
        file = StaticFilesTest.contractBytes(256 * 1024);
        Files.write(dir.resolve("256k"), file);
        InetSocketAddress any = new InetSocketAddress(LOOPBACK, 0);
        server = Server.start(any, Handler.Root.NOT_FOUND, null, StaticFiles.of(dir), App.of(Server.APP_DIR),
                new Server.Extra(any, Protocols.sslContext(cert.cert, cert.key), any, any));
    }

    @AfterAll
    static void stop() throws Exception {
        server.stop();
        cert.close();
    }

    /** A TLS socket that trusts the test certificate, offering {@code alpn} (none when empty). */
    private static SSLSocket tlsSocket(String... alpn) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = new FileInputStream(cert.cert)) {
            Certificate c = CertificateFactory.getInstance("X.509").generateCertificate(in);
            trust.setCertificateEntry("test", c);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        SSLSocket socket = (SSLSocket) context.getSocketFactory()
                .createSocket(LOOPBACK, server.tlsAddress().getPort());
        SSLParameters params = socket.getSSLParameters();
        params.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate names 127.0.0.1
        if (alpn.length > 0) {
            params.setApplicationProtocols(alpn);
        }
        socket.setSSLParameters(params);
        socket.startHandshake();
        return socket;
    }

    @Test
    void tlsHttp11ByAlpn() throws Exception {
        SSLSocket socket = tlsSocket("http/1.1");
        assertEquals("http/1.1", socket.getApplicationProtocol());
        assertEquals("TLSv1.3", socket.getSession().getProtocol());
        try (RawHttp http = new RawHttp(socket)) {
            RawHttp.Response r = http.send(RawHttp.get("/blank"));
            assertEquals(200, r.status);
            assertEquals("OK", r.text());
            assertEquals("text/plain", r.header("content-type"));
            // Keep-alive: a second request on the same connection.
            RawHttp.Response again = http.send(RawHttp.get("/static/256k"));
            assertEquals(200, again.status);
            assertArrayEquals(file, again.body);
        }
    }

    @Test
    void tlsWithoutAlpnIsHttp11() throws Exception {
        SSLSocket socket = tlsSocket();
        try (RawHttp http = new RawHttp(socket)) {
            RawHttp.Response r = http.send(RawHttp.post("/work", EXAMPLE));
            assertEquals(200, r.status, r.text());
            assertEquals(JSON.readTree(EXAMPLE_ANSWER), JSON.readTree(r.body));
        }
    }

    @Test
    void tlsHttp2ByAlpn() throws Exception {
        try (H2Client h2 = new H2Client(new InetSocketAddress(LOOPBACK, server.tlsAddress().getPort()), true)) {
            assertEquals("h2", h2.alpn());
            everyEndpoint(h2);
        }
    }

    @Test
    void h2cWithPriorKnowledge() throws Exception {
        try (H2Client h2 = new H2Client(new InetSocketAddress(LOOPBACK, server.h2cAddress().getPort()), false)) {
            everyEndpoint(h2);
        }
    }

    @Test
    void h2cUploads() throws Exception {
        byte[] body = StaticFilesTest.contractBytes(3 * 1024 * 1024 + 17);
        try (H2Client h2 = new H2Client(new InetSocketAddress(LOOPBACK, server.h2cAddress().getPort()), false)) {
            List<FullHttpResponse> answers = h2.send(List.of(
                    request(HttpMethod.POST, "/upload", body),
                    request(HttpMethod.POST, "/upload", new byte[0]),
                    request(HttpMethod.GET, "/blank", null)));
            try {
                assertUpload(body, answers.get(0));
                assertUpload(new byte[0], answers.get(1));
                assertEquals("OK", text(answers.get(2)));
            } finally {
                answers.forEach(FullHttpResponse::release);
            }
        }
    }

    /** An upload over 16 MiB ends its stream with 413, and the connection goes on serving others. */
    @Test
    void h2cRefusesATooLargeUpload() throws Exception {
        try (H2Client h2 = new H2Client(new InetSocketAddress(LOOPBACK, server.h2cAddress().getPort()), false)) {
            List<FullHttpResponse> refused = h2.send(List.of(request(HttpMethod.POST, "/upload", new byte[17 * 1024 * 1024])));
            try {
                assertEquals(413, refused.get(0).status().code());
            } finally {
                refused.forEach(FullHttpResponse::release);
            }
            List<FullHttpResponse> after = h2.send(List.of(request(HttpMethod.GET, "/blank", null)));
            try {
                assertEquals("OK", text(after.get(0)));
            } finally {
                after.forEach(FullHttpResponse::release);
            }
        }
    }

    private static void assertUpload(byte[] body, FullHttpResponse r) throws Exception {
        assertEquals(200, r.status().code(), text(r));
        JsonNode answer = JSON.readTree(text(r));
        assertEquals(body.length, answer.get("length").longValue());
        assertEquals(HexFormat.of().formatHex(Upload.sha256().digest(body)), answer.get("sha256").textValue());
    }

    /**
     * Many streams at once on one connection, each with its own request: /blank, /work with a
     * document of its own (plain and gzipped), a static file, a 400 and a 404. Every answer must
     * be its own request's.
     */
    private static void everyEndpoint(H2Client h2) throws Exception {
        int n = 40;
        List<FullHttpRequest> requests = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            switch (i % 6) {
                case 0 -> requests.add(request(HttpMethod.GET, "/blank", null));
                case 1, 2 -> {
                    FullHttpRequest work = request(HttpMethod.POST, "/work", workDoc(i).getBytes(StandardCharsets.UTF_8));
                    if (i % 6 == 2) {
                        work.headers().set(HttpHeaderNames.ACCEPT_ENCODING, "gzip");
                    }
                    requests.add(work);
                }
                case 3 -> requests.add(request(HttpMethod.GET, "/static/256k", null));
                case 4 -> requests.add(request(HttpMethod.POST, "/work",
                        "{\"product\":\"p\"}".getBytes(StandardCharsets.UTF_8)));
                default -> requests.add(request(HttpMethod.GET, "/nothing-here", null));
            }
        }
        List<FullHttpResponse> answers = h2.send(requests);
        try {
            for (int i = 0; i < n; i++) {
                FullHttpResponse r = answers.get(i);
                String date = r.headers().get(HttpHeaderNames.DATE);
                assertNotNull(date, "Date on stream " + i);
                ZonedDateTime.parse(date, DateTimeFormatter.RFC_1123_DATE_TIME);
                switch (i % 6) {
                    case 0 -> {
                        assertEquals(200, r.status().code());
                        assertEquals("OK", text(r));
                    }
                    case 1, 2 -> {
                        assertEquals(200, r.status().code(), text(r));
                        byte[] body = ByteBufUtil.getBytes(r.content());
                        if (i % 6 == 2) {
                            assertEquals("gzip", r.headers().get(HttpHeaderNames.CONTENT_ENCODING));
                            body = new GZIPInputStream(new ByteArrayInputStream(body)).readAllBytes();
                        }
                        JsonNode answer = JSON.readTree(body);
                        assertEquals("product-" + i, answer.get("product").textValue());
                        assertEquals("2001-01-01T00:00:" + String.format("%02d", i) + ".000Z",
                                answer.get("client").get("maxDate").textValue());
                    }
                    case 3 -> {
                        assertEquals(200, r.status().code());
                        assertArrayEquals(file, ByteBufUtil.getBytes(r.content()));
                        assertEquals(String.valueOf(file.length), r.headers().get(HttpHeaderNames.CONTENT_LENGTH));
                    }
                    case 4 -> assertEquals(400, r.status().code());
                    default -> assertEquals(404, r.status().code());
                }
            }
        } finally {
            answers.forEach(FullHttpResponse::release);
        }
    }

    private static String workDoc(int i) {
        return "{\"product\":\"product-" + i + "\",\"requestId\":\"r" + i + "\",\"group\":{\"kind\":\"k\",\"default\":false,"
                + "\"balance\":" + i + ".5,\"dates\":[\"2000-01-01T00:00:00.000Z\",\"2001-01-01T00:00:"
                + String.format("%02d", i) + ".000Z\"]}}";
    }

    private static FullHttpRequest request(HttpMethod method, String path, byte[] body) {
        FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, path,
                body == null ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body));
        req.headers().set(HttpHeaderNames.HOST, "localhost");
        if (body != null) {
            req.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json");
            req.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        }
        return req;
    }

    private static String text(FullHttpResponse r) {
        return r.content().toString(StandardCharsets.UTF_8);
    }

    @Test
    void grpcCompute() throws Exception {
        ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
        try {
            WorkGrpc.WorkBlockingStub work = WorkGrpc.newBlockingStub(channel);
            WorkReply reply = work.compute(WorkRequest.newBuilder()
                    .setProduct("WidgetPro-7")
                    .setRequestId("5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59")
                    .setGroup(Group.newBuilder().setKind("retail").setDefault(true).setBalance(1234.56)
                            .addDates("2020-01-12T10:53:17.773Z")
                            .addDates("2019-03-01T00:00:00.000Z")
                            .addDates("2021-07-30T23:59:59.999Z"))
                    .build());
            assertEquals("WidgetPro-7", reply.getProduct());
            assertEquals("5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59", reply.getRequestId());
            assertEquals(1234.56, reply.getClient().getBalance());
            assertEquals("2019-03-01T00:00:00.000Z", reply.getClient().getMinDate());
            assertEquals("2021-07-30T23:59:59.999Z", reply.getClient().getMaxDate());

            for (WorkRequest bad : List.of(
                    WorkRequest.newBuilder().setProduct("p").setRequestId("r").build(), // no group
                    WorkRequest.newBuilder().setGroup(Group.newBuilder().setKind("k")).build(), // no dates
                    WorkRequest.newBuilder().setGroup(Group.newBuilder().addDates("2020-13-45T99:00:00.000Z")).build(),
                    WorkRequest.newBuilder().setGroup(Group.newBuilder()
                            .addDates("2020-01-01T00:00:00.000Z").addDates("yesterday")).build(),
                    WorkRequest.newBuilder().setGroup(Group.newBuilder().addDates("2021-02-29T00:00:00.000Z")).build())) {
                StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> work.compute(bad));
                assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), bad.toString());
            }
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
