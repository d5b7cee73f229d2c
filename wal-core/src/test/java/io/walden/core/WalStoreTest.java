package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Many logs in one directory: created, found, kept, deleted, and their background jobs on a few shared threads. */
class WalStoreTest {
    @TempDir
    Path dir;

    private WalStoreConfig.Builder small() {
        return WalStoreConfig.builder(dir).defaults(b -> b.segmentSize(SMALL_SEGMENT));
    }

    @Test
    void aCreatedLogIsThereWithItsRecordsWhenTheStoreOpensAgain() {
        long lsn;
        try (WalStore store = WalStore.open(small().build())) {
            Wal orders = store.create("orders");
            lsn = orders.append(TestLogs.bytes("first order"), Durability.LOCAL);
            assertThat(store.log("orders")).containsSame(orders);
        }
        try (WalStore store = WalStore.open(small().build())) {
            assertThat(store.names()).containsExactly("orders");
            try (WalReader r = store.log("orders").orElseThrow().reader(lsn)) {
                assertThat(TestLogs.string(r.next().payload())).isEqualTo("first order");
            }
        }
    }

    @Test
    void eachLogHasItsOwnLsnsAndRecords() {
        try (WalStore store = WalStore.open(small().build())) {
            Wal a = store.create("a");
            Wal b = store.create("b");
            long inA = a.append(TestLogs.bytes("in a"), Durability.LOCAL);
            long inB = b.append(TestLogs.bytes("in b"), Durability.LOCAL);
            assertThat(inA).isEqualTo(inB).as("both logs' first record");
            try (WalReader r = b.reader(inB)) {
                assertThat(TestLogs.string(r.next().payload())).isEqualTo("in b");
                assertThat(r.next()).isNull();
            }
        }
    }

    @Test
    void aNameThatIsNotALogNameIsRefused() {
        try (WalStore store = WalStore.open(small().build())) {
            for (String bad : List.of("", "Orders", ".hidden", "a/b", "-a", "a b", "x".repeat(129))) {
                assertThatThrownBy(() -> store.create(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("not a log name");
            }
            assertThat(store.create("x".repeat(128))).isNotNull();
            assertThat(store.create("a.b_c-9")).isNotNull();
        }
    }

    @Test
    void creatingALogThatExistsIsRefused() {
        try (WalStore store = WalStore.open(small().build())) {
            store.create("orders");
            assertThatThrownBy(() -> store.create("orders")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("exists");
        }
    }

    @Test
    void aDeletedLogIsGoneWithItsFiles() {
        try (WalStore store = WalStore.open(small().build())) {
            Wal gone = store.create("gone");
            gone.append(TestLogs.bytes("x"), Durability.LOCAL);
            store.create("kept");
            store.delete("gone");
            assertThat(store.names()).containsExactly("kept");
            assertThat(store.log("gone")).isEmpty();
            assertThat(dir.resolve("logs").resolve("gone")).doesNotExist();
            assertThatThrownBy(() -> gone.append(TestLogs.bytes("y"), Durability.OFF)).isInstanceOf(WalClosedException.class);
            assertThatThrownBy(() -> store.delete("gone")).isInstanceOf(IllegalStateException.class);
            assertThat(store.create("gone").insertLsn()).as("a new log of the same name starts empty")
                    .isEqualTo(store.log("kept").orElseThrow().insertLsn());
        }
    }

    @Test
    void aLogKeepsTheSettingsItWasCreatedWithWhileTheRestFollowTheStoresDefaults() {
        try (WalStore store = WalStore.open(small().build())) {
            store.create("kept", b -> b.retentionBytes(4 * SMALL_SEGMENT).compression(Compression.LZ4));
        }
        try (WalStore store = WalStore.open(small().defaults(b -> b.segmentSize(SMALL_SEGMENT)
                .retentionTime(Duration.ofDays(7))).build())) {
            WalConfig c = store.log("kept").orElseThrow().config();
            assertThat(c.retentionBytes()).isEqualTo(4 * SMALL_SEGMENT);
            assertThat(c.compression()).isEqualTo(Compression.LZ4);
            assertThat(c.retentionTime()).as("left at the default: today's default").isEqualTo(Duration.ofDays(7));
        }
    }

    @Test
    void aLogKeepsItsSegmentSizeWhenTheStoresDefaultChanges() {
        try (WalStore store = WalStore.open(small().build())) {
            store.create("small").append(TestLogs.bytes("x"), Durability.LOCAL);
        }
        try (WalStore store = WalStore.open(WalStoreConfig.builder(dir).defaults(b -> b.segmentSize(4 * SMALL_SEGMENT)).build())) {
            assertThat(store.log("small").orElseThrow().config().segmentSize()).isEqualTo(SMALL_SEGMENT);
            assertThat(store.create("big").config().segmentSize()).isEqualTo(4 * SMALL_SEGMENT);
        }
    }

    @Test
    void everySettingACreationGivesAppliesToTheNewLogItsIdentityIncluded() {
        try (WalStore store = WalStore.open(small().build())) {
            Wal copy = store.create("copy", b -> b.logId(0x1234_5678L));
            assertThat(copy.status().logId()).isEqualTo(0x1234_5678L);
        }
    }

    @Test
    void codeGivesEachLogWhatAFileCannotKeepAtEveryOpen() {
        RecordTimeTest.SteppedClock clock = new RecordTimeTest.SteppedClock(java.time.Instant.parse("2026-01-01T00:00:00Z"));
        WalStoreConfig config = small().logSettings((name, b) -> b.clock(clock)).build();
        try (WalStore store = WalStore.open(config)) {
            Wal log = store.create("timed");
            long lsn = log.append(TestLogs.bytes("then"), Durability.LOCAL);
            try (WalReader r = log.reader(lsn)) {
                assertThat(r.next().timestamp()).isEqualTo(java.time.Instant.parse("2026-01-01T00:00:00Z"));
            }
        }
    }

    @Test
    void aSecondStoreOnTheSameDirectoryIsRefused() {
        try (WalStore store = WalStore.open(small().build())) {
            assertThatThrownBy(() -> WalStore.open(small().build())).isInstanceOf(WalLockedException.class);
        }
    }

    @Test
    void twoHundredLogsRunOnTheStoresFewThreadsAndLeaveNoThreadBehind() throws Exception {
        int before = ManagementFactory.getThreadMXBean().getThreadCount();
        int cores = Runtime.getRuntime().availableProcessors();
        try (WalStore store = WalStore.open(small().build())) {
            for (int i = 0; i < 200; i++) {
                store.create("log-" + i).append(TestLogs.bytes("record " + i), Durability.LOCAL);
            }
            int during = ManagementFactory.getThreadMXBean().getThreadCount() - before;
            assertThat(during).as("threads for 200 logs").isLessThanOrEqualTo(2 * cores + 8);
        }
        try (WalStore store = WalStore.open(small().build())) {
            assertThat(store.names()).hasSize(200);
            for (int i = 0; i < 200; i++) {
                Wal log = store.log("log-" + i).orElseThrow();
                try (WalReader r = log.reader(log.oldestLsn())) {
                    assertThat(TestLogs.string(r.next().payload())).isEqualTo("record " + i);
                }
            }
        }
        assertThat(Eventually.holds(() -> ManagementFactory.getThreadMXBean().getThreadCount() <= before))
                .as("every thread of the store ended").isTrue();
    }

    @Test
    void whatACrashLeftOfACreationOrADeletionIsRemovedAtOpen() throws Exception {
        try (WalStore store = WalStore.open(small().build())) {
            store.create("kept");
        }
        Path logs = dir.resolve("logs");
        Files.createDirectories(logs.resolve(".creating-half"));
        Files.writeString(logs.resolve(".creating-half").resolve("00000000000000000000.wal"), "torn");
        Files.createDirectories(logs.resolve(".deleting-old"));
        try (WalStore store = WalStore.open(small().build()); Stream<Path> left = Files.list(logs)) {
            assertThat(store.names()).containsExactly("kept");
            assertThat(left.map(p -> p.getFileName().toString())).containsExactly("kept");
        }
    }
}
