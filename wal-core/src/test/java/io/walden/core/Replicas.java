package io.walden.core;

import java.nio.file.Path;

/** In-process replicas for the wal-core tests: a log that refuses appends and copies another's bytes. */
final class Replicas {
    static final String REFUSAL = "this log is a replica of primary 127.0.0.1:7401; write to the primary";

    private Replicas() {
    }

    /** Opens a replica's log (new or existing) of {@code primary}'s log id in {@code dir}. */
    static Wal open(Wal primary, Path dir) {
        Wal replica = Wal.open(TestLogs.small(dir).logId(primary.status().logId()).build());
        replica.replication().refuseAppends(REFUSAL);
        return replica;
    }

    /**
     * Copies what {@code primary} has written (flushed or not) from the replica's end, flushes the replica, and lets
     * its readers see what the primary has flushed (as the replication client does when the primary reports it).
     */
    static void catchUp(Wal primary, Wal replica) {
        copyWritten(primary, replica);
        replica.replication().raiseReadLimit(primary.flushedLsn());
    }

    /** {@link #catchUp} without word of the primary's flush: the replica's readers see nothing new. */
    static void copyWritten(Wal primary, Wal replica) {
        long position = replica.insertLsn();
        for (ReplicationChunk chunk; (chunk = primary.replication().readWritten(position, 8192)) != null; ) {
            position = replica.replication().writeReceived(chunk.startLsn(), chunk.bytes());
        }
        replica.flush();
    }
}
