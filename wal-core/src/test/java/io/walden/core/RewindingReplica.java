package io.walden.core;

import java.nio.file.Path;

/**
 * Child-JVM main for {@link RewindTest}: opens a replica's log, rewinds it to an LSN, prints {@code REWOUND}, then
 * waits to be killed (no clean close, no shutdown checkpoint).
 *
 * <p>Args: directory, LSN (decimal).
 */
public final class RewindingReplica {
    private RewindingReplica() {
    }

    public static void main(String[] args) throws Exception {
        Wal wal = Wal.open(TestLogs.small(Path.of(args[0])).build());
        wal.replication().refuseAppends(Replicas.REFUSAL);
        System.out.println("READY");
        wal.replication().rewindTo(Long.parseLong(args[1]));
        System.out.println("REWOUND");
        System.out.flush();
        ChildJvm.awaitKill();
    }
}
