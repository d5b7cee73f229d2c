package io.walden.replication.tls;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;

import java.nio.file.Path;
import javax.net.ssl.SSLException;

/**
 * TLS contexts for replication connections, from PEM files (a certificate chain, a PKCS#8 private key, CA
 * certificates to trust). The replica checks the primary's certificate against its trusted CAs and the host name
 * it connects to; a primary given trusted client CAs requires each replica to present a certificate they signed
 * (mutual TLS).
 */
public final class ReplicationTls {
    private ReplicationTls() {
    }

    /**
     * @param cert            the primary's certificate chain (PEM)
     * @param key             its private key (PEM, PKCS#8)
     * @param trustedClientCa CA certificates a replica's certificate must chain to (mutual TLS), or null to accept
     *                        replicas without a certificate (then use a shared secret)
     * @throws IllegalStateException when a file cannot be read or parsed, naming it
     */
    public static SslContext server(Path cert, Path key, Path trustedClientCa) {
        try {
            SslContextBuilder b = SslContextBuilder.forServer(cert.toFile(), key.toFile());
            if (trustedClientCa != null) {
                b.trustManager(trustedClientCa.toFile()).clientAuth(ClientAuth.REQUIRE);
            }
            return b.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalStateException("cannot use the replication TLS files (certificate " + cert + ", key " + key
                    + (trustedClientCa == null ? "" : ", client CA " + trustedClientCa) + "): " + e.getMessage(), e);
        }
    }

    /**
     * @param trustedCa CA certificates the primary's certificate must chain to (PEM), or null for the JDK's default
     *                  trust store
     * @param cert      this replica's certificate chain for mutual TLS, or null
     * @param key       its private key, or null
     * @throws IllegalStateException when a file cannot be read or parsed, naming it
     */
    public static SslContext client(Path trustedCa, Path cert, Path key) {
        try {
            SslContextBuilder b = SslContextBuilder.forClient().endpointIdentificationAlgorithm("HTTPS");
            if (trustedCa != null) {
                b.trustManager(trustedCa.toFile());
            }
            if (cert != null) {
                b.keyManager(cert.toFile(), key.toFile());
            }
            return b.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalStateException("cannot use the replication TLS files (CA " + trustedCa
                    + (cert == null ? "" : ", certificate " + cert + ", key " + key) + "): " + e.getMessage(), e);
        }
    }
}
