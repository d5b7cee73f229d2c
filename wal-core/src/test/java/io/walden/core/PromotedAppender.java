package io.walden.core;

import io.walden.core.internal.recovery.ControlFile;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

/**
 * Child-JVM main for {@link PromotionCrashTest}: a replica's log that received {@link #BEFORE} records from its primary
 * (and word that the primary flushed them) is promoted, then appends {@link #AFTER} records at LOCAL and prints
 * {@code A <i> <lsn>} after each returned, then {@code DONE}, and waits to be killed. Periodic checkpoints are held back
 * (one hour apart), so that nothing but the promotion itself can tell the control file the read limit is gone.
 * Before promoting, it copies the control file to {@link #CONTROL_BEFORE_PROMOTION}: the parent may put it back to
 * stand for a crash that took the promotion's own checkpoint.
 *
 * <p>Args: primary directory, replica directory[, the epoch number a replica group's coordinator recorded: the
 * promotion is then {@code promote(n)}, as an elected member's is].
 */
public final class PromotedAppender {
    static final int BEFORE = 100;
    static final int AFTER = 50;
    static final String CONTROL_BEFORE_PROMOTION = "control-before-promotion";

    private PromotedAppender() {
    }

    static byte[] payload(int i) {
        return TestLogs.bytes("record " + i);
    }

    static WalConfig.Builder replicaConfig(Path dir) {
        return TestLogs.small(dir).checkpointInterval(Duration.ofHours(1));
    }

    public static void main(String[] args) throws Exception {
        Path replicaDir = Path.of(args[1]);
        try (Wal primary = Wal.open(TestLogs.small(Path.of(args[0])).build());
             Wal replica = Replicas.open(primary, replicaDir)) {
            for (int i = 0; i < BEFORE; i++) {
                primary.append(payload(i), Durability.OFF);
            }
            primary.flush();
            Replicas.catchUp(primary, replica);
        } // the replica's shutdown checkpoint records its read limit, as its periodic ones would have
        Wal replica = Wal.open(replicaConfig(replicaDir).build());
        replica.replication().refuseAppends(Replicas.REFUSAL);
        Files.copy(replicaDir.resolve(ControlFile.NAME), replicaDir.resolve(CONTROL_BEFORE_PROMOTION),
                StandardCopyOption.REPLACE_EXISTING);
        if (args.length > 2) {
            replica.replication().promote(Integer.parseInt(args[2])); // elected: numbered by the coordinator
        } else {
            replica.replication().promote();
        }
        System.out.println("READY");
        for (int i = BEFORE; i < BEFORE + AFTER; i++) {
            long lsn = replica.append(payload(i), Durability.LOCAL);
            System.out.println("A " + i + " " + lsn);
        }
        System.out.println("DONE");
        System.out.flush();
        ChildJvm.awaitKill();
    }
}
