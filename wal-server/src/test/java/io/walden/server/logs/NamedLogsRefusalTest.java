package io.walden.server.logs;

import io.walden.server.config.ServerConfig;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Which servers hold named logs (docs/operations.md, "Named logs"): every one whose logs are all replicated. */
class NamedLogsRefusalTest {

    private static String refusal(Map<String, String> flags) throws Exception {
        return LogCatalog.namedLogsRefusal(ServerConfig.load(null, flags));
    }

    @Test
    void aReplicaAndAPrimaryWithSynchronousReplicasHoldNamedLogs() throws Exception {
        assertThat(refusal(Map.of("replicate-from", "127.0.0.1:7401"))).isNull();
        assertThat(refusal(Map.of("sync-replicas", "FIRST 1 (r1)"))).isNull();
    }

    @Test
    void aReplicaCatchingUpFromAnArchiveHoldsOnlyTheLogDefault() throws Exception {
        assertThat(refusal(Map.of("replicate-from", "127.0.0.1:7401", "restore-from", "file:///tmp/archive")))
                .contains("restore-from");
    }

    @Test
    void aReplicaGroupMemberHoldsNamedLogs() throws Exception {
        // Its group follows, elects by and fails over every log together (docs/operations.md, "Replica groups").
        assertThat(refusal(Map.of("coordinator", "zk://127.0.0.1:2181/walden/g", "name", "a",
                "replication-listen", "127.0.0.1:7401"))).isNull();
    }
}
