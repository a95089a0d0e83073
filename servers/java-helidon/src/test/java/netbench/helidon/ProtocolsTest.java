package netbench.helidon;

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
import io.grpc.netty.shaded.io.netty.buffer.ByteBufUtil;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.grpc.netty.shaded.io.netty.handler.codec.http.FullHttpRequest;
import io.grpc.netty.shaded.io.netty.handler.codec.http.FullHttpResponse;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpMethod;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpVersion;
import io.helidon.webserver.WebServer;
import java.io.ByteArrayInputStream;
import java.io.FileInputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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

/** Contract 1.5: the TLS socket (HTTP/1.1 and h2 by ALPN), h2c with prior knowledge, and gRPC. */
class ProtocolsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String EXAMPLE = "{\"product\":\"WidgetPro-7\",\"requestId\":\"5f0c6a3e\",\"group\":{"
            + "\"kind\":\"retail\",\"default\":true,\"balance\":1234.56,\"dates\":[\"2020-01-12T10:53:17.773Z\","
            + "\"2019-03-01T00:00:00.000Z\",\"2021-07-30T23:59:59.999Z\"]}}";
    private static final String EXAMPLE_ANSWER = "{\"product\":\"WidgetPro-7\",\"requestId\":\"5f0c6a3e\","
            + "\"client\":{\"balance\":1234.56,\"minDate\":\"2019-03-01T00:00:00.000Z\","
            + "\"maxDate\":\"2021-07-30T23:59:59.999Z\"}}";

    @TempDir
    static Path dir;
    private static TestCert cert;
    private static WebServer server;
    private static byte[] file;

    @BeforeAll
    static void start() throws Exception {
        cert = TestCert.make();
        file = StaticContentTest.contractFile(256 * 1024);
        Files.write(dir.resolve("256k"), file);
        server = Server.start("127.0.0.1", 0, Routes.Root.NOT_FOUND, null, dir, App.of(Server.APP_DIR),
                new Server.Listeners(0, Server.tls(cert.cert.toPath(), cert.key.toPath()), 0, 0));
    }

    @AfterAll
    static void stop() throws Exception {
        server.stop();
        cert.close();
    }

    private static SSLContext trusting() throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = new FileInputStream(cert.cert)) {
            trust.setCertificateEntry("test", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        return context;
    }

    /** A TLS socket that trusts the test certificate, offering {@code alpn} (none when empty). */
    private static SSLSocket tlsSocket(String... alpn) throws Exception {
        SSLSocket socket = (SSLSocket) trusting().getSocketFactory()
                .createSocket(InetAddress.getLoopbackAddress(), server.port(Server.TLS));
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
            RawHttp.Response again = http.send(RawHttp.get("/static/256k")); // the same connection
            assertEquals(200, again.status);
            assertArrayEquals(file, again.body);
        }
    }

    @Test
    void tlsWithoutAlpnIsHttp11() throws Exception {
        try (RawHttp http = new RawHttp(tlsSocket())) {
            RawHttp.Response r = http.send(RawHttp.post("/work", EXAMPLE));
            assertEquals(200, r.status, r.text());
            assertEquals(JSON.readTree(EXAMPLE_ANSWER), JSON.readTree(r.body));
        }
    }

    /** What one stream answered. */
    private record Answer(int status, String date, String encoding, byte[] body) {}

    /** One request of {@link #everyEndpoint}: method, path, body (null: none), Accept-Encoding gzip. */
    private record Ask(String method, String path, byte[] body, boolean gzip) {}

    /**
     * Many requests at once: /blank, /work with a document of its own (plain and gzipped), a
     * static file, a 400, a 404 and uploads. Every answer must be its own request's.
     */
    private static List<Ask> asks() {
        List<Ask> asks = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            asks.add(switch (i % 7) {
                case 0 -> new Ask("GET", "/blank", null, false);
                case 1 -> new Ask("POST", "/work", workDoc(i).getBytes(StandardCharsets.UTF_8), false);
                case 2 -> new Ask("POST", "/work", workDoc(i).getBytes(StandardCharsets.UTF_8), true);
                case 3 -> new Ask("GET", "/static/256k", null, false);
                case 4 -> new Ask("POST", "/work", "{\"product\":\"p\"}".getBytes(StandardCharsets.UTF_8), false);
                case 5 -> new Ask("POST", "/upload", StaticContentTest.contractFile(300 * 1024 + i), false);
                default -> new Ask("GET", "/nothing-here", null, false);
            });
        }
        return asks;
    }

    private static void check(List<Ask> asks, List<Answer> answers) throws Exception {
        for (int i = 0; i < asks.size(); i++) {
            Answer a = answers.get(i);
            assertNotNull(a.date(), "Date on request " + i);
            ZonedDateTime.parse(a.date(), DateTimeFormatter.RFC_1123_DATE_TIME);
            switch (i % 7) {
                case 0 -> {
                    assertEquals(200, a.status());
                    assertEquals("OK", new String(a.body(), StandardCharsets.UTF_8));
                }
                case 1, 2 -> {
                    assertEquals(200, a.status(), new String(a.body(), StandardCharsets.UTF_8));
                    byte[] body = a.body();
                    if (i % 7 == 2) {
                        assertEquals("gzip", a.encoding());
                        body = new GZIPInputStream(new ByteArrayInputStream(body)).readAllBytes();
                    }
                    JsonNode answer = JSON.readTree(body);
                    assertEquals("product-" + i, answer.get("product").textValue());
                    assertEquals("2001-01-01T00:00:" + String.format("%02d", i) + ".000Z",
                            answer.get("client").get("maxDate").textValue());
                }
                case 3 -> {
                    assertEquals(200, a.status());
                    assertArrayEquals(file, a.body());
                }
                case 4 -> assertEquals(400, a.status());
                case 5 -> {
                    assertEquals(200, a.status(), new String(a.body(), StandardCharsets.UTF_8));
                    byte[] sent = asks.get(i).body();
                    JsonNode answer = JSON.readTree(a.body());
                    assertEquals(sent.length, answer.get("length").longValue());
                    assertEquals(HexFormat.of().formatHex(Upload.sha256().digest(sent)), answer.get("sha256").textValue());
                }
                default -> assertEquals(404, a.status());
            }
        }
    }

    @Test
    void tlsHttp2ByAlpn() throws Exception {
        // The JDK's client: one connection, ALPN h2, every request a stream sent before any answer.
        HttpClient h2 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).sslContext(trusting()).build();
        List<Ask> asks = asks();
        List<CompletableFuture<HttpResponse<byte[]>>> pending = new ArrayList<>();
        for (Ask ask : asks) {
            HttpRequest.Builder req = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.port(Server.TLS) + ask.path()))
                    .timeout(Duration.ofSeconds(20))
                    .method(ask.method(), ask.body() == null ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofByteArray(ask.body()));
            if (ask.gzip()) {
                req.header("Accept-Encoding", "gzip");
            }
            pending.add(h2.sendAsync(req.build(), HttpResponse.BodyHandlers.ofByteArray()));
        }
        List<Answer> answers = new ArrayList<>();
        for (CompletableFuture<HttpResponse<byte[]>> p : pending) {
            HttpResponse<byte[]> r = p.get(30, TimeUnit.SECONDS);
            assertEquals(HttpClient.Version.HTTP_2, r.version());
            answers.add(new Answer(r.statusCode(), r.headers().firstValue("date").orElse(null),
                    r.headers().firstValue("content-encoding").orElse(null), r.body()));
        }
        check(asks, answers);
    }

    @Test
    void h2cWithPriorKnowledge() throws Exception {
        List<Ask> asks = asks();
        List<FullHttpRequest> requests = new ArrayList<>();
        for (Ask ask : asks) {
            FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(ask.method()),
                    ask.path(), ask.body() == null ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(ask.body()));
            req.headers().set("host", "localhost");
            if (ask.body() != null) {
                req.headers().setInt("content-length", ask.body().length);
            }
            if (ask.gzip()) {
                req.headers().set("accept-encoding", "gzip");
            }
            requests.add(req);
        }
        try (H2Client h2c = new H2Client(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port(Server.H2C)), false)) {
            List<FullHttpResponse> responses = h2c.send(requests);
            try {
                List<Answer> answers = new ArrayList<>();
                for (FullHttpResponse r : responses) {
                    answers.add(new Answer(r.status().code(), r.headers().get("date"), r.headers().get("content-encoding"),
                            ByteBufUtil.getBytes(r.content())));
                }
                check(asks, answers);
            } finally {
                responses.forEach(FullHttpResponse::release);
            }
        }
    }

    /** An upload over 16 MiB ends its stream with 413, and the connection goes on serving others. */
    @Test
    void h2cRefusesATooLargeUpload() throws Exception {
        byte[] body = new byte[17 * 1024 * 1024];
        FullHttpRequest upload = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/upload",
                Unpooled.wrappedBuffer(body));
        upload.headers().set("host", "localhost").setInt("content-length", body.length);
        try (H2Client h2c = new H2Client(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port(Server.H2C)), false)) {
            List<FullHttpResponse> refused = h2c.send(List.of(upload));
            try {
                assertEquals(413, refused.get(0).status().code());
            } finally {
                refused.forEach(FullHttpResponse::release);
            }
            FullHttpRequest blank = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/blank");
            blank.headers().set("host", "localhost");
            List<FullHttpResponse> after = h2c.send(List.of(blank));
            try {
                assertEquals(200, after.get(0).status().code());
            } finally {
                after.forEach(FullHttpResponse::release);
            }
        }
    }

    private static String workDoc(int i) {
        return "{\"product\":\"product-" + i + "\",\"requestId\":\"r" + i + "\",\"group\":{\"kind\":\"k\",\"default\":false,"
                + "\"balance\":" + i + ".5,\"dates\":[\"2000-01-01T00:00:00.000Z\",\"2001-01-01T00:00:"
                + String.format("%02d", i) + ".000Z\"]}}";
    }

    @Test
    void grpcCompute() throws Exception {
        ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", server.port(Server.GRPC)).usePlaintext().build();
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
