package io.walden.server;

import io.walden.core.Eventually;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.server.config.ServerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A server that cannot start says why and leaves nothing behind: the log closed, the event loops shut down. */
@Timeout(60)
@Isolated("it counts the process's event loop threads: no other test's server may start or stop meanwhile")
class ServerStartFailureTest {
    @TempDir
    Path dir;

    @Test
    void shouldRefuseToStartOnATakenReplicationPortNamingItAndReleaseTheLogAndItsThreads() throws Exception {
        long loopsBefore = eventLoopThreads();
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            WaldenServer server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.toString(),
                    "http", "127.0.0.1:0", "replication-listen", "127.0.0.1:" + taken.getLocalPort())));
            assertThatThrownBy(server::start).hasMessageContaining("cannot listen for replicas")
                    .hasMessageContaining(String.valueOf(taken.getLocalPort()));
        }
        try (Wal wal = Wal.open(WalConfig.builder(dir).build())) {
            assertThat(wal.isClosed()).as("the failed server closed the log (its lock is free)").isFalse();
        }
        Eventually.holds(() -> eventLoopThreads() <= loopsBefore);
        assertThat(eventLoopThreads()).as("event loop threads left running").isLessThanOrEqualTo(loopsBefore);
    }

    @Test
    void shouldRefuseATakenHttpPortNamingItBeforeTheLogIsOpened() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            WaldenServer server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.toString(),
                    "http", "127.0.0.1:" + taken.getLocalPort(), "replication-listen", "none")));
            assertThatThrownBy(server::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("cannot listen on 127.0.0.1:" + taken.getLocalPort() + " (--http): ")
                    .hasMessageNotContaining("Exception");
        }
        assertThat(Wal.exists(dir)).as("the log was never opened, so never created").isFalse();
    }

    @Test
    void shouldNameASettingTheLogRefusesWithItsArchiveByItsFlag() throws Exception {
        WaldenServer server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.resolve("log").toString(),
                "http", "127.0.0.1:0", "replication-listen", "none", "archive-to", dir.resolve("archive").toUri().toString(),
                "segment-size", "1MiB", "archive-max-pending-bytes", "1MiB")));
        assertThatThrownBy(server::start).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--archive-max-pending-bytes: must be at least two segments (2097152 bytes), not 1MiB");
    }

    private static long eventLoopThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("multiThreadIoEventLoopGroup")).count();
    }
}
