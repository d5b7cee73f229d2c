package io.walden.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.server.config.ServerConfig;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;

import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cluster's server that restarts before the ZooKeeper session of its previous life has expired (after a kill -9)
 * waits to join: Helix holds it back for the session timeout and 5 s more, until the previous life's live-instance
 * node is gone. Meanwhile its HTTP port answers every request at once with 503 {@code joining} and
 * {@code Retry-After}, instead of leaving clients in the listen backlog with no word (docs/cluster.md); once joined it
 * serves.
 */
@Timeout(60)
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on ZooKeeper and Helix
class ClusterJoiningTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int SESSION_MS = 1000;

    @TempDir
    Path work;
    private TestingServer zk;
    private CuratorFramework previousLife;
    private WaldenServer server;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
        if (previousLife != null) {
            previousLife.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    private ServerConfig config(int httpPort) {
        return ServerConfig.load(null, Map.of("data-dir", work.resolve("s1").toString(),
                "http", "127.0.0.1:" + httpPort, "replication-listen", "127.0.0.1:0", "name", "s1",
                "cluster", "zk://" + zk.getConnectString() + "/walden/test",
                "coordinator-session-timeout", SESSION_MS + "ms"));
    }

    private HttpResponse<String> send(int port, String method, String path, String body) throws Exception {
        return send(port, method, path, body, Duration.ofSeconds(5));
    }

    private HttpResponse<String> send(int port, String method, String path, String body, Duration timeout)
            throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(timeout).method(method, HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    @Test
    void aServerRejoiningWhileItsPreviousLifesSessionLingersAnswers503JoiningAtOnceThenServes() throws Exception {
        // Ticks of 250 ms: ZooKeeper grants the 1 s sessions asked for (its floor is two ticks).
        zk = new TestingServer(new InstanceSpec(work.resolve("zk").toFile(), -1, -1, -1, false, 1, 250, 100), true);
        int port = ServerProcess.freePort();
        new WaldenServer(config(port)).start().close(); // the cluster, and s1 in it, exist: as before a crash
        // The previous life, killed -9: its live-instance node stays until its session expires (here: until closed).
        previousLife = CuratorFrameworkFactory.newClient(zk.getConnectString(), new RetryOneTime(100));
        previousLife.start();
        String liveInstance = "{\"id\":\"s1\",\"simpleFields\":{\"SESSION_ID\":\"1\"},\"listFields\":{},\"mapFields\":{}}";
        previousLife.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath("/walden/test/LIVEINSTANCES/s1", liveInstance.getBytes(StandardCharsets.UTF_8));

        long starting = System.nanoTime();
        CompletableFuture<WaldenServer> restart = CompletableFuture.supplyAsync(() -> {
            try {
                return new WaldenServer(config(port)).start();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        HttpResponse<String> append = null;
        while (append == null && !restart.isDone()) {
            try {
                append = send(port, "POST", "/v1/logs/orders/records", "an order");
            } catch (ConnectException | HttpTimeoutException notListeningYet) {
                Thread.sleep(20); // not bound yet, or bound and not reading while it opens its log (a second at most)
            }
        }
        assertThat(append).as("answered while joining").isNotNull();
        assertThat(append.statusCode()).isEqualTo(503);
        assertThat(append.headers().firstValue("retry-after")).hasValue("1");
        assertThat(JSON.readTree(append.body()).get("error").asText()).isEqualTo("joining");
        // Helix finds the previous life's node within about a second and waits 6 s: every request meanwhile is answered
        // at once (within a few seconds on a loaded machine), /health too (not alive for a load balancer yet).
        long holding = System.nanoTime() + 1_500_000_000L;
        int answered = 0;
        while (System.nanoTime() < holding) {
            HttpResponse<String> health = send(port, "GET", "/health", "", Duration.ofSeconds(3));
            assertThat(health.statusCode()).isEqualTo(503);
            assertThat(JSON.readTree(health.body()).get("error").asText()).isEqualTo("joining");
            answered++;
            Thread.sleep(50);
        }
        assertThat(restart).as("still joining: Helix waits for the previous life's session").isNotDone();

        previousLife.close(); // its session ends: Helix's last try, after its wait, finds the node gone
        previousLife = null;
        server = restart.get();
        System.out.printf("ClusterJoiningTest: the restarted server joined after %d ms (session %d ms), %d requests "
                + "answered 503 joining meanwhile%n", (System.nanoTime() - starting) / 1_000_000, SESSION_MS, answered + 1);
        assertThat(send(port, "GET", "/ready", "").statusCode()).isEqualTo(200);
        HttpResponse<String> created = send(port, "POST", "/v1/logs", "{\"name\": \"orders\"}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    }
}
