package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.server.config.ServerConfig;
import org.apache.curator.test.TestingServer;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Walden servers in this JVM that form one cluster ({@code --cluster}) on a ZooKeeper of their own (curator-test's, on
 * a free port), each on free HTTP and replication ports with its data under the test's directory, reached over real
 * HTTP by name. For the tests of a cluster's behaviour that need no child process; {@link ClusterProcesses} runs
 * {@code walden.jar} children instead, for kills.
 *
 * <p>Thread-safety: one test thread.
 */
final class InProcessCluster implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static final AtomicInteger CLUSTERS = new AtomicInteger();

    private final Path work;
    private final TestingServer zk;
    /**
     * The cluster's name, this object's own: in-process clusters of one name on different ZooKeepers, in tests that ran
     * side by side, disturbed each other's placements (ClusterServeTest's third copy was never placed, most runs
     * beside ClusterArchiveTest; never since the names differ). Helix names per-JVM threads and state by cluster name;
     * which of it was shared we did not trace.
     */
    private final String clusterName = "test" + CLUSTERS.incrementAndGet();
    /** The servers running, by name, in name order. */
    private final Map<String, WaldenServer> servers = new TreeMap<>();
    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /** Starts the ZooKeeper; servers under {@code work/<name>}. */
    InProcessCluster(Path work) throws Exception {
        this.work = work;
        this.zk = new TestingServer(true);
    }

    /** Starts server {@code name} in the cluster, with {@code settings} (serve's flags' names) beside the cluster's. */
    void start(String name, Map<String, String> settings) throws InterruptedException {
        Map<String, String> all = new HashMap<>(Map.of("data-dir", work.resolve(name).toString(), "http", "127.0.0.1:0",
                "replication-listen", "127.0.0.1:0", "name", name,
                "cluster", "zk://" + zk.getConnectString() + "/walden/" + clusterName));
        all.putAll(settings);
        servers.put(name, new WaldenServer(ServerConfig.load(null, all)).start());
    }

    /** Stops server {@code name} (a clean close: it leaves the cluster as a stopped server does). */
    void stop(String name) throws Exception {
        servers.remove(name).close();
    }

    /** The names of the servers running, in name order; a view that follows {@link #start} and {@link #stop}. */
    Set<String> names() {
        return Collections.unmodifiableSet(servers.keySet());
    }

    /** {@code path} (with its query) at server {@code name}'s HTTP address. */
    String url(String name, String path) {
        return url(servers.get(name), path);
    }

    static String url(WaldenServer server, String path) {
        return "http://127.0.0.1:" + server.boundAddress().getPort() + path;
    }

    /** A request to server {@code name}; redirects (a log's 307 to its primary) are followed. */
    HttpResponse<String> send(String name, String method, String path, String body) throws Exception {
        return send(servers.get(name), method, path, body);
    }

    /** As {@link #send(String, String, String, String)}, to a server outside the cluster (one restored, say). */
    HttpResponse<String> send(WaldenServer server, String method, String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url(server, path))).timeout(Duration.ofSeconds(30))
                .method(method, HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(String name, String path) throws Exception {
        return send(name, "GET", path, "");
    }

    HttpResponse<String> post(String name, String path, String body) throws Exception {
        return send(name, "POST", path, body);
    }

    /** The JSON body of {@code GET path} at server {@code name}. */
    JsonNode json(String name, String path) throws Exception {
        return JSON.readTree(get(name, path).body());
    }

    /** Closes every server still running (each, whatever another's close threw), then the ZooKeeper. */
    @Override
    public void close() throws Exception {
        Exception failed = null;
        for (WaldenServer s : servers.values()) {
            try {
                s.close();
            } catch (Exception e) {
                failed = withSuppressed(failed, e);
            }
        }
        servers.clear();
        try {
            zk.close();
        } catch (Exception e) {
            failed = withSuppressed(failed, e);
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** The first failure, with the later ones added to it. */
    private static Exception withSuppressed(Exception first, Exception later) {
        if (first == null) {
            return later;
        }
        first.addSuppressed(later);
        return first;
    }
}
