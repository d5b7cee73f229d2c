package io.walden.replication;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Self-signed PEM certificates for TLS tests, made with openssl (for 127.0.0.1 and localhost). A test using them is
 * skipped, not failed, where openssl is missing. Shared with wal-server's tests through the test jar.
 */
public final class TestCertificates {
    private TestCertificates() {
    }

    /** A certificate and key pair: {@code <name>.crt} and {@code <name>.key} in {@code dir}. */
    public record Pair(Path cert, Path key) {
    }

    public static Pair selfSigned(Path dir, String name) throws IOException, InterruptedException {
        Pair pair = new Pair(dir.resolve(name + ".crt"), dir.resolve(name + ".key"));
        Process openssl;
        try {
            openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=" + name, "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", pair.key().toString(), "-out", pair.cert().toString()).redirectErrorStream(true).start();
        } catch (IOException e) {
            assumeTrue(false, "openssl is not installed");
            return pair;
        }
        openssl.getInputStream().readAllBytes();
        assumeTrue(openssl.waitFor(60, TimeUnit.SECONDS) && openssl.exitValue() == 0, "openssl could not make a certificate");
        return pair;
    }
}
