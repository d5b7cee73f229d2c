package io.walden.core;

import io.walden.core.internal.recovery.ControlFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A promoted replica that crashes keeps every record it acknowledged readable (docs/format.md, "Epoch history file"):
 * the promotion is durable before its first append returns, and an open ignores the read limit of a log that began
 * its current epoch itself. The child ({@link PromotedAppender}) holds periodic checkpoints back, so the outcome does not
 * depend on whether one happened to run between the promotion and the kill.
 */
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on the children it kills
class PromotionCrashTest {
    @TempDir
    Path work;

    /** Runs the child to its last acknowledged append, kills it with SIGKILL, and returns the acknowledged LSNs. */
    private long[] promoteAppendAndKill(Path replicaDir, String... electedAs) throws Exception {
        List<String> args = new ArrayList<>(List.of(work.resolve("primary").toString(), replicaDir.toString()));
        args.addAll(List.of(electedAs));
        try (ChildJvm child = ChildJvm.start(PromotedAppender.class, work.resolve("child.err"), args.toArray(new String[0]))) {
            assertThat(child.awaitReady(60, TimeUnit.SECONDS)).as("child promoted its log").isTrue();
            Eventually.holdsWithin(60, () -> child.lines().contains("DONE"));
            child.kill();
            List<String> acks = child.lines().stream().filter(l -> l.startsWith("A ")).toList();
            assertThat(acks).as("acknowledged after the promotion").hasSize(PromotedAppender.AFTER);
            return acks.stream().mapToLong(l -> Long.parseLong(l.split(" ")[2])).toArray();
        }
    }

    /** Every record of the log, from its oldest, as its readers see them. */
    private static List<String> records(Wal wal) {
        List<String> out = new ArrayList<>();
        try (WalReader r = wal.reader(wal.oldestLsn())) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                out.add(TestLogs.string(rec.payload()));
            }
        }
        return out;
    }

    private static List<String> expected(int count) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(TestLogs.string(PromotedAppender.payload(i)));
        }
        return out;
    }

    private static void assertAllReadableAndAppendable(Path dir, int acknowledged) {
        try (Wal wal = Wal.open(PromotedAppender.replicaConfig(dir).build())) {
            assertThat(wal.readLimit()).as("a log that began its epoch has no read limit").isEqualTo(Long.MAX_VALUE);
            assertThat(records(wal)).as("every acknowledged record, before and after the promotion")
                    .containsExactlyElementsOf(expected(acknowledged));
            long lsn = wal.append(TestLogs.bytes("after the restart"), Durability.LOCAL);
            try (WalReader r = wal.reader(lsn)) {
                assertThat(r.next()).as("an append after the restart reads back").isNotNull();
            }
        }
    }

    @Test
    void aPromotedReplicaKilledAfterAcknowledgingAppendsReadsThemAllAfterItsRestart() throws Exception {
        Path dir = work.resolve("replica");
        promoteAppendAndKill(dir);
        assertAllReadableAndAppendable(dir, PromotedAppender.BEFORE + PromotedAppender.AFTER);
    }

    /** An elected member's promotion (numbered by its coordinator: {@code promote(n)}) is as durable. */
    @Test
    void anElectedReplicaKilledAfterAcknowledgingAppendsReadsThemAllAfterItsRestart() throws Exception {
        Path dir = work.resolve("replica");
        promoteAppendAndKill(dir, "7");
        assertAllReadableAndAppendable(dir, PromotedAppender.BEFORE + PromotedAppender.AFTER);
        try (Wal wal = Wal.open(PromotedAppender.replicaConfig(dir).build())) {
            assertThat(wal.status().epoch()).isEqualTo(7);
        }
    }

    @Test
    void aPromotedReplicaStillReadsEverythingAfterACleanRestartThatFollowsTheCrash() throws Exception {
        Path dir = work.resolve("replica");
        promoteAppendAndKill(dir);
        try (Wal wal = Wal.open(PromotedAppender.replicaConfig(dir).build())) {
            assertThat(records(wal)).hasSize(PromotedAppender.BEFORE + PromotedAppender.AFTER);
        } // the clean close writes the shutdown checkpoint: it must not bring the read limit back
        assertAllReadableAndAppendable(dir, PromotedAppender.BEFORE + PromotedAppender.AFTER);
    }

    /**
     * The promotion's own checkpoint lost (the control file put back as it was before the promotion, as a crash between
     * the history's write and the checkpoint's would leave it): the history's mark alone lifts the read limit.
     */
    @Test
    void aPromotedReplicaWhoseControlFileStillHoldsItsReadLimitReadsEverythingItAcknowledged() throws Exception {
        Path dir = work.resolve("replica");
        promoteAppendAndKill(dir);
        Files.copy(dir.resolve(PromotedAppender.CONTROL_BEFORE_PROMOTION), dir.resolve(ControlFile.NAME),
                StandardCopyOption.REPLACE_EXISTING);
        assertAllReadableAndAppendable(dir, PromotedAppender.BEFORE + PromotedAppender.AFTER);
    }
}
