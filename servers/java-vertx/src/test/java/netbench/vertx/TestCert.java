package netbench.vertx;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A self-signed certificate for localhost and 127.0.0.1 with its PKCS#8 key, made by openssl in
 * a temporary folder for one test class (never a file in git), as the runner's would be: PEM
 * files, the key PKCS#8.
 */
final class TestCert implements AutoCloseable {
    final Path dir;
    final File cert;
    final File key;

    private TestCert(Path dir) {
        this.dir = dir;
        this.cert = dir.resolve("cert.pem").toFile();
        this.key = dir.resolve("key.pem").toFile();
    }

    static TestCert make() throws IOException, InterruptedException {
        TestCert c = new TestCert(Files.createTempDirectory("netbench-tls"));
        Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec",
                "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", c.key.getPath(), "-out", c.cert.getPath(), "-days", "2",
                "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                "-addext", "basicConstraints=critical,CA:FALSE")
                .redirectErrorStream(true)
                .start();
        String output = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            c.close();
            throw new IOException("openssl req failed: " + output);
        }
        return c;
    }

    @Override
    public void close() throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }
}
