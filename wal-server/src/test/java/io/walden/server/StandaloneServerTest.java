package io.walden.server;

import io.walden.server.config.ServerConfig;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A primary on its own ({@code --replication-listen none}): no replication port, so a token needs no replication secret. */
@Timeout(60)
class StandaloneServerTest {
    @TempDir
    Path dir;

    @Test
    void aServerWithATokenAndNoReplicationListenerStartsWithoutAReplicationSecret() throws Exception {
        Map<String, String> flags = Map.of("data-dir", dir.toString(), "http", "127.0.0.1:0", "auth-token", "t",
                "replication-listen", "none", "durability", "local");
        try (WaldenServer server = new WaldenServer(ServerConfig.load(null, flags)).start()) {
            HttpResponse<String> appended = ContractCheckedClient.create().send(HttpRequest.newBuilder(URI.create(
                    "http://127.0.0.1:" + server.boundAddress().getPort() + "/v1/records")).header("Authorization", "Bearer t")
                    .POST(HttpRequest.BodyPublishers.ofString("alone")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(appended.statusCode()).as(appended.body()).isEqualTo(200);
        }
    }

    @Test
    void aTokenWithAReplicationListenerStillNeedsAReplicationSecret() throws Exception {
        WaldenServer server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.toString(), "http",
                "127.0.0.1:0", "auth-token", "t", "replication-listen", "127.0.0.1:0")));
        assertThatThrownBy(server::start).hasMessageContaining("--replication-secret");
        server.close();
    }
}
