package io.walden.replication.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.walden.core.Durability;
import io.walden.core.Eventually;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.PrimaryIdentity;
import io.walden.replication.replica.ReplicaClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replication on a group the application owns ({@link EventLoops#shared}): the endpoint, the identity probe and the
 * replica all run on it, replicate, and close without shutting it down (it stays usable for its owner).
 */
@Timeout(60)
class SharedEventLoopsTest {
    @TempDir
    Path work;

    @Test
    void aPrimaryAndAReplicaOnOneSharedGroupReplicateAndCloseLeavingTheGroupToItsOwner() throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            EventLoops loops = EventLoops.sharedNio(group);
            try (Wal primary = Wal.open(WalConfig.builder(work.resolve("p")).segmentSize(64 << 10).build());
                 ReplicationServer server = ReplicationServer.builder(primary)
                         .listen(new InetSocketAddress("127.0.0.1", 0)).eventLoops(loops).start()) {
                long lsn = primary.append("before the replica".getBytes(), Durability.LOCAL);
                PrimaryIdentity id = PrimaryIdentity.fetch(server.address(), "r1", null, null, 10_000, loops);
                try (Wal replica = id.openReplicaLog(WalConfig.builder(work.resolve("r")).segmentSize(64 << 10));
                     ReplicaClient client = ReplicaClient.builder(replica, server.address(), "r1").eventLoops(loops).start()) {
                    long next = primary.append("while it follows".getBytes(), Durability.LOCAL);
                    Eventually.waitUntil("the replica holds both records", () -> replica.flushedLsn() > next);
                    assertThat(next).isGreaterThan(lsn);
                }
            }
            assertThat(group.isShuttingDown()).as("closing replication left the owner's group running").isFalse();
            assertThat(group.submit(() -> "still serving").get(5, TimeUnit.SECONDS)).isEqualTo("still serving");
        } finally {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }
}
