package io.walden.server;

import io.walden.replication.TestCertificates;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** HTTPS from PEM files: a self-signed certificate made with openssl, trusted by the client. */
class TlsIT {
    @TempDir
    Path work;

    @Test
    void shouldServeHttpsFromPemFiles() throws Exception {
        TestCertificates.Pair pair = TestCertificates.selfSigned(work, "localhost");
        Path cert = pair.cert();
        Path key = pair.key();

        HttpClient client = ContractCheckedClient.wrap(HttpClient.newBuilder().sslContext(trusting(cert)).connectTimeout(Duration.ofSeconds(5)).build());
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(), "https", client,
                "--tls-cert", cert.toString(), "--tls-key", key.toString())) {
            assertThat(server.post("/v1/records?durability=local", "over tls".getBytes()).statusCode()).isEqualTo(200);
            assertThat(server.get("/health").body()).contains("alive");
            HttpClient plain = ContractCheckedClient.create();
            assertThatThrownBy(() -> plain.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.port + "/health")).build(),
                    HttpResponse.BodyHandlers.ofString())).isInstanceOf(IOException.class);
        }
    }

    private static SSLContext trusting(Path certPem) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(certPem)) {
            trust.setCertificateEntry("walden", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }
}
