package io.walden.core.archive;

import io.walden.core.Eventually;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.BlobStoreContext;

import java.net.URI;
import java.nio.file.Path;
import java.util.Properties;

/**
 * A real S3 API server for tests: S3Proxy over a directory (jclouds' filesystem store), on loopback, checking AWS
 * signatures with {@link #ACCESS_KEY}/{@link #SECRET_KEY}. It can be stopped and started again on the same port with
 * the same contents: the "store refusing requests" of the archive tests.
 */
public final class S3Server implements AutoCloseable {
    public static final String ACCESS_KEY = "walden-test";
    public static final String SECRET_KEY = "walden-test-secret";
    public static final String BUCKET = "walden-archive";

    private final BlobStoreContext context;
    private final BlobStore store;
    private int port;
    private S3Proxy proxy;

    public S3Server(Path dir) throws Exception {
        Properties p = new Properties();
        p.setProperty("jclouds.filesystem.basedir", dir.toAbsolutePath().toString());
        this.context = ContextBuilder.newBuilder("filesystem").overrides(p).build(BlobStoreContext.class);
        this.store = context.getBlobStore();
        store.createContainerInLocation(null, BUCKET);
        start();
    }

    /** Starts serving (on the port it had before, if it ran before). */
    public synchronized void start() throws Exception {
        if (proxy != null) {
            return;
        }
        S3Proxy p = S3Proxy.builder().blobStore(store).endpoint(URI.create("http://127.0.0.1:" + port))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY).build();
        p.start();
        Eventually.waitUntil("S3Proxy started", () -> "STARTED".equals(p.getState()));
        port = p.getPort();
        proxy = p;
    }

    /** Stops serving: every request is refused (connection refused) until {@link #start()}. */
    public synchronized void stop() throws Exception {
        if (proxy != null) {
            proxy.stop();
            proxy = null;
        }
    }

    public String endpoint() {
        return "http://127.0.0.1:" + port;
    }

    public String uri(String prefix) {
        return "s3://" + BUCKET + "/" + prefix;
    }

    /** Sets the AWS SDK's default chains (system properties) to reach this server. */
    public static void useDefaultChains() {
        System.setProperty("aws.accessKeyId", ACCESS_KEY);
        System.setProperty("aws.secretAccessKey", SECRET_KEY);
        System.setProperty("aws.region", "us-east-1");
    }

    @Override
    public void close() throws Exception {
        stop();
        context.close();
    }
}
