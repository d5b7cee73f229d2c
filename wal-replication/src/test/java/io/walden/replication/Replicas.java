package io.walden.replication;

import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.replication.primary.ReplicaStatus;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.ReplicaClient;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** What the replication tests share: small logs, a loopback primary, replicas, waiting, comparing copies. */
final class Replicas {
    static final long SEGMENT = 64 << 10;
    static final InetSocketAddress ANY_LOOPBACK_PORT = new InetSocketAddress("127.0.0.1", 0);

    private Replicas() {
    }

    static WalConfig.Builder config(Path dir) {
        return WalConfig.builder(dir).segmentSize(SEGMENT);
    }

    /** A primary endpoint on a free loopback port with a 1 s sender timeout. */
    static ReplicationServer serve(Wal primary) throws InterruptedException {
        return ReplicationServer.builder(primary).listen(ANY_LOOPBACK_PORT).keepaliveMillis(1000).start();
    }

    /** A replica of {@code server}'s log with a short status interval. */
    static ReplicaClient follow(Wal replica, ReplicationServer server, String name) {
        return ReplicaClient.builder(replica, server.address(), name).statusIntervalMillis(200).start();
    }

    /** Whether the replica is connected and streaming (caught up), as its primary sees it. */
    static boolean streaming(ReplicationServer server, String name) {
        return server.replica(name).map(ReplicaStatus::isStreaming).orElse(false);
    }

    /** The flushed LSN the replica reported, or -1 while it is not connected. */
    static long flushed(ReplicationServer server, String name) {
        return server.replica(name).map(ReplicaStatus::flushLsn).orElse(-1L);
    }

    /** Every segment both directories hold is byte for byte the same. */
    static void assertSameSegments(Path a, Path b) throws Exception {
        int compared = 0;
        for (long seg : SegmentFiles.list(a)) {
            Path other = b.resolve(SegmentFiles.name(seg));
            if (Files.exists(other)) {
                assertThat(Files.mismatch(a.resolve(SegmentFiles.name(seg)), other)).as("segment %x", seg).isEqualTo(-1L);
                compared++;
            }
        }
        assertThat(compared).as("segments compared").isPositive();
    }
}
