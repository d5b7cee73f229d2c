package io.walden.replication;

import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.core.WalStore;
import io.walden.core.WalStoreConfig;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.PrimaryIdentity;
import io.walden.replication.replica.ReplicaLogs;
import io.walden.replication.replica.StoreReplicaClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

import java.nio.file.Path;
import java.util.Map;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.replication.Replicas.ANY_LOOPBACK_PORT;
import static io.walden.replication.Replicas.config;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replication's threads do not grow with the logs (docs/replication.md, "Threads"): a primary's streams share its
 * sender threads ({@code walden-senders-N}) and a replica's logs share its receiver threads ({@code walden-receivers-N}),
 * however many logs there are. Isolated: it counts the JVM's threads by name, so no other test may start any meanwhile.
 */
@Isolated
@Timeout(60)
class ReplicationThreadsTest {
    private static final int LOGS = 50;
    /** The most threads either side may add, whatever the number of logs (the sender and receiver groups' sizes). */
    private static final int BOUND = 8;

    @TempDir
    Path work;

    @Test
    void aReplicaOfFiftyLogsRunsOnAFewSenderAndReceiverThreadsAndReceivesEveryLog() throws Exception {
        long sendersBefore = threads("walden-sender");
        long receiversBefore = threads("walden-receiver");
        Path p = work.resolve("p");
        Path r = work.resolve("r");
        try (Wal root = Wal.open(config(p).build()); WalStore store = store(p)) {
            for (int i = 0; i < LOGS; i++) {
                store.create("log-" + i).append(("first of log-" + i).getBytes(), Durability.LOCAL);
            }
            try (ReplicationServer server = ReplicationServer.builder(root).store(store, name -> Map.of())
                    .listen(ANY_LOOPBACK_PORT).keepaliveMillis(1000).start();
                 Wal replicaRoot = PrimaryIdentity.fetch(server.address(), "r1", null, null, 10_000).openReplicaLog(config(r));
                 WalStore replicaStore = store(r);
                 StoreReplicaClient client = StoreReplicaClient.builder(ReplicaLogs.of(replicaRoot, replicaStore, null),
                         server.address(), "r1").statusIntervalMillis(200).start()) {
                waitUntil(() -> replicaStore.names().size() == LOGS);
                for (int i = 0; i < LOGS; i++) {
                    String log = "log-" + i;
                    long end = store.log(log).orElseThrow().append(("second of " + log).getBytes(), Durability.LOCAL);
                    waitUntil(() -> client.isStreaming(log) && replicaStore.log(log).map(w -> w.readLimit() > end).orElse(false));
                }

                assertThat(threads("walden-sender") - sendersBefore).as("the primary's sender threads for %s streams", LOGS + 1)
                        .isBetween(1L, (long) BOUND);
                assertThat(threads("walden-receiver") - receiversBefore).as("the replica's receiver threads for %s logs", LOGS + 1)
                        .isBetween(1L, (long) BOUND);
            }
        }
    }

    private static WalStore store(Path dir) {
        return WalStore.open(WalStoreConfig.builder(dir).writerThreads(2).defaults(b -> b.segmentSize(Replicas.SEGMENT)).build());
    }

    /** The live threads whose names start with {@code prefix}. */
    private static long threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }
}
