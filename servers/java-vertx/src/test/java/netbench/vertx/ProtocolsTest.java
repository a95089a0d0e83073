package netbench.vertx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemTrustOptions;
import java.io.FileInputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Contract 1.5: the TLS listener (HTTP/1.1 and h2 by ALPN) and h2c with prior knowledge. */
class ProtocolsTest {
    private static final String EXAMPLE = "{\"product\":\"WidgetPro-7\",\"requestId\":\"5f0c6a3e\",\"group\":{"
            + "\"kind\":\"retail\",\"default\":true,\"balance\":1234.56,\"dates\":[\"2020-01-12T10:53:17.773Z\","
            + "\"2019-03-01T00:00:00.000Z\",\"2021-07-30T23:59:59.999Z\"]}}";
    private static final String EXAMPLE_ANSWER = "{\"product\":\"WidgetPro-7\",\"requestId\":\"5f0c6a3e\","
            + "\"client\":{\"balance\":1234.56,\"minDate\":\"2019-03-01T00:00:00.000Z\","
            + "\"maxDate\":\"2021-07-30T23:59:59.999Z\"}}";

    private static TestCert cert;
    private static Server server;
    private static int tlsPort;
    private static int h2cPort;
    private static Vertx client;

    @BeforeAll
    static void start() throws Exception {
        cert = TestCert.make();
        tlsPort = freePort();
        h2cPort = freePort();
        // Two instances, as on a two-core machine: each listener's port is shared by both.
        server = Server.start("127.0.0.1", freePort(), HttpVerticle.Root.NOT_FOUND, 2,
                new HttpVerticle.Listeners(tlsPort, cert.cert.getPath(), cert.key.getPath(), h2cPort));
        client = Vertx.vertx();
    }

    @AfterAll
    static void stop() throws Exception {
        client.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        server.stop();
        cert.close();
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** A TLS socket that trusts the test certificate, offering {@code alpn} (none when empty). */
    private static SSLSocket tlsSocket(String... alpn) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = new FileInputStream(cert.cert)) {
            trust.setCertificateEntry("test", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(), tlsPort);
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
            RawHttp.Response work = http.send(RawHttp.post("/work", EXAMPLE)); // the same connection
            assertEquals(200, work.status, work.text());
            assertEquals(new JsonObject(EXAMPLE_ANSWER), new JsonObject(work.text()));
        }
    }

    @Test
    void tlsWithoutAlpnIsHttp11() throws Exception {
        try (RawHttp http = new RawHttp(tlsSocket())) {
            RawHttp.Response r = http.send(RawHttp.get("/blank"));
            assertEquals(200, r.status);
            assertEquals("OK", r.text());
        }
    }

    @Test
    void tlsHttp2ByAlpn() throws Exception {
        HttpClientAgent h2 = client.createHttpClient(new HttpClientOptions()
                .setProtocolVersion(HttpVersion.HTTP_2)
                .setSsl(true)
                .setUseAlpn(true)
                .setTrustOptions(new PemTrustOptions().addCertPath(cert.cert.getPath())));
        try {
            everyEndpoint(h2, tlsPort);
        } finally {
            h2.close();
        }
    }

    @Test
    void h2cWithPriorKnowledge() throws Exception {
        HttpClientAgent h2c = client.createHttpClient(new HttpClientOptions()
                .setProtocolVersion(HttpVersion.HTTP_2)
                .setHttp2ClearTextUpgrade(false)); // the client preface first, no Upgrade
        try {
            everyEndpoint(h2c, h2cPort);
        } finally {
            h2c.close();
        }
    }

    /** What one stream answered. */
    private record Answer(HttpVersion version, int status, String date, Buffer body) {}

    /**
     * Many requests at once on Vert.x's HTTP/2 client (one connection, a stream each): /blank,
     * /work with a document of its own, a 400 and a 404. Every answer must be its own request's.
     */
    private static void everyEndpoint(HttpClientAgent h2, int port) throws Exception {
        int n = 40;
        List<Future<Answer>> answers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            HttpMethod method = i % 4 == 0 || i % 4 == 3 ? HttpMethod.GET : HttpMethod.POST;
            String path = switch (i % 4) {
                case 0 -> "/blank";
                case 1, 2 -> "/work";
                default -> "/nothing-here";
            };
            Buffer body = switch (i % 4) {
                case 1 -> Buffer.buffer(workDoc(i));
                case 2 -> Buffer.buffer("{\"product\":\"p\"}");
                default -> null;
            };
            answers.add(h2.request(method, port, "127.0.0.1", path)
                    .compose(req -> body == null ? req.send() : req.send(body))
                    .compose(res -> res.body().map(b -> new Answer(res.version(), res.statusCode(),
                            res.getHeader("date"), b))));
        }
        Future.all(answers).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        for (int i = 0; i < n; i++) {
            Answer a = answers.get(i).result();
            assertEquals(HttpVersion.HTTP_2, a.version());
            assertNotNull(a.date(), "Date");
            ZonedDateTime.parse(a.date(), DateTimeFormatter.RFC_1123_DATE_TIME);
            switch (i % 4) {
                case 0 -> {
                    assertEquals(200, a.status());
                    assertEquals("OK", a.body().toString());
                }
                case 1 -> {
                    assertEquals(200, a.status(), a.body().toString());
                    JsonObject answer = new JsonObject(a.body());
                    assertEquals("product-" + i, answer.getString("product"));
                    assertEquals("2001-01-01T00:00:" + String.format("%02d", i) + ".000Z",
                            answer.getJsonObject("client").getString("maxDate"));
                }
                case 2 -> assertEquals(400, a.status());
                default -> assertEquals(404, a.status());
            }
        }
    }

    private static String workDoc(int i) {
        return "{\"product\":\"product-" + i + "\",\"requestId\":\"r" + i + "\",\"group\":{\"kind\":\"k\",\"default\":false,"
                + "\"balance\":" + i + ".5,\"dates\":[\"2000-01-01T00:00:00.000Z\",\"2001-01-01T00:00:"
                + String.format("%02d", i) + ".000Z\"]}}";
    }
}
