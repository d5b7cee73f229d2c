package io.walden.core;

import io.walden.core.internal.commit.WalBuffers;
import io.walden.core.internal.journal.StoreJournal;
import net.openhft.chronicle.core.io.BackgroundResourceReleaser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many logs opened and closed, created and deleted, round after round, leave nothing behind in the process: no thread,
 * no open descriptor, no mapping of their files, no byte of direct or native memory (issue #36), all measured for real
 * ({@link ProcessFootprint}). A few logs live and go before the measuring starts, elsewhere: the first ones load classes
 * and make what the JDK and Chronicle make once per process (Chronicle's resource releaser thread, a thread's cached
 * temporary buffer).
 *
 * <p>Sizes: {@code -Dwalden.leak.logs} logs (default 100; -Psoak: 1,000), {@code -Dwalden.leak.rounds} rounds (default
 * 3; -Psoak: 5).
 */
@Isolated("it measures the whole process: no other test's threads, files or memory may come and go meanwhile")
class WalStoreLeakTest {
    private static final int LOGS = Integer.getInteger("walden.leak.logs", 100);
    private static final int ROUNDS = Integer.getInteger("walden.leak.rounds", 3);

    @TempDir
    Path dir;

    private WalStore open() {
        return WalStore.open(WalStoreConfig.builder(dir).defaults(b -> b.segmentSize(SMALL_SEGMENT)).build());
    }

    @Test
    void aStoreOfManyLogsOpenedAppendedToAndClosedAgainAndAgainLeavesNothingBehind() throws Exception {
        warmUp();
        try (WalStore store = open()) {
            for (int i = 0; i < LOGS; i++) {
                store.create("log-" + i);
            }
        }
        ProcessFootprint before = settled();
        for (int round = 1; round <= ROUNDS; round++) {
            ProcessFootprint open = openAppendToEveryLogAndClose();
            assertThat(open.threadsNamed("walden-")).as("the store's threads, while it was open").isNotEmpty();
            assertThat(open.descriptorsUnder(dir)).as("its logs' descriptors, while it was open").hasSizeGreaterThan(LOGS);
            assertThat(open.mappings()).as("its logs' mappings, while it was open").hasSizeGreaterThanOrEqualTo(LOGS);
            assertThat(open.nativeBytes() - before.nativeBytes()).as("its logs' WAL buffers, while it was open")
                    .isGreaterThanOrEqualTo(LOGS * WalBuffers.MIN_CAPACITY);
            assertThat(heldBeyond(before)).as("the process after round %d of %d", round, ROUNDS).isEmpty();
        }
    }

    @Test
    void logsCreatedAndDeletedAgainAndAgainInAnOpenStoreLeaveNothingBehind() throws Exception {
        warmUp();
        ProcessFootprint closed = settled();
        try (WalStore store = open()) {
            createAppendToAndDeleteEveryLog(store); // the store's threads start with their first jobs, and stay
            ProcessFootprint before = settled();
            String lock = dir.toRealPath().resolve(WalStore.LOCK).toString();
            String journal = dir.toRealPath().resolve(StoreJournal.DIRECTORY).toString() + "/";
            assertThat(before.descriptorsUnder(dir)).as("an open store without logs holds its lock and its journal only")
                    .contains(lock).allMatch(d -> d.equals(lock) || d.startsWith(journal));
            for (int round = 1; round <= ROUNDS; round++) {
                ProcessFootprint full = createAppendToAndDeleteEveryLog(store);
                assertThat(full.descriptorsUnder(dir)).as("its logs' descriptors, before their deletion")
                        .hasSizeGreaterThan(LOGS);
                assertThat(full.nativeBytes() - before.nativeBytes()).as("its logs' WAL buffers, before their deletion")
                        .isGreaterThanOrEqualTo(LOGS * WalBuffers.MIN_CAPACITY);
                assertThat(heldBeyond(before)).as("the process after round %d of %d", round, ROUNDS).isEmpty();
            }
        }
        assertThat(heldBeyond(closed)).as("the process once the store closed").isEmpty();
    }

    /** Opens the store, appends one record to every log, measures the process, closes the store. */
    private ProcessFootprint openAppendToEveryLogAndClose() {
        try (WalStore store = open()) {
            assertThat(store.names()).hasSize(LOGS);
            for (String name : store.names()) {
                store.log(name).orElseThrow().append(TestLogs.bytes(name), Durability.LOCAL);
            }
            return ProcessFootprint.of(dir);
        }
    }

    /** Creates every log and appends one record to each, measures the process, deletes them all. */
    private ProcessFootprint createAppendToAndDeleteEveryLog(WalStore store) {
        for (int i = 0; i < LOGS; i++) {
            store.create("log-" + i).append(TestLogs.bytes("log-" + i), Durability.LOCAL);
        }
        ProcessFootprint full = ProcessFootprint.of(dir);
        for (int i = 0; i < LOGS; i++) {
            store.delete("log-" + i);
        }
        assertThat(store.names()).isEmpty();
        return full;
    }

    /**
     * The process once what was let go is gone: Chronicle unmaps and frees on its resource releaser thread, after the
     * release; the JDK frees a direct buffer once it is collected.
     */
    private ProcessFootprint settled() {
        BackgroundResourceReleaser.releasePendingResources();
        System.gc();
        return ProcessFootprint.of(dir);
    }

    /**
     * What the {@link #settled()} process holds beyond {@code before}, once nothing or after 10 s (a thread ends just after
     * the close that ends it).
     */
    private List<String> heldBeyond(ProcessFootprint before) throws Exception {
        Eventually.holdsWithin(10, () -> settled().beyond(before).isEmpty());
        return settled().beyond(before);
    }

    /**
     * A store's logs created, appended to, closed, opened again and deleted, in a directory of their own, before any
     * measure: what the JDK and Chronicle make once per process is then made (and classes are loaded).
     */
    private void warmUp() throws Exception {
        Path other = Files.createTempDirectory(dir, "warm-up");
        WalStoreConfig config = WalStoreConfig.builder(other).defaults(b -> b.segmentSize(SMALL_SEGMENT)).build();
        try (WalStore store = WalStore.open(config)) {
            for (int i = 0; i < 3; i++) {
                store.create("log-" + i).append(TestLogs.bytes("warm-up"), Durability.LOCAL);
            }
        }
        try (WalStore store = WalStore.open(config)) {
            for (String name : store.names()) {
                store.log(name).orElseThrow().append(TestLogs.bytes("warm-up"), Durability.LOCAL);
                store.delete(name);
            }
        }
    }
}
