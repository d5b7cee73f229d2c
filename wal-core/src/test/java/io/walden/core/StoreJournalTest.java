package io.walden.core;

import io.walden.core.internal.journal.StoreJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The store journal that the logs' durable bytes go through (docs/group-commit.md, "Flushes across logs"). A crash is
 * taken as a copy of the store's files while it is open (what a killed process leaves: what the page cache holds),
 * and a power loss as that copy with the bytes only the journal made durable spoilt (StoreJournalFiles).
 */
class StoreJournalTest {
    @TempDir
    Path dir;

    private WalStoreConfig.Builder small(Path store) {
        return WalStoreConfig.builder(store).defaults(b -> b.segmentSize(SMALL_SEGMENT));
    }

    @Test
    void commitsOfEveryLogGoThroughTheJournal() {
        try (WalStore store = WalStore.open(small(dir).build())) {
            Wal a = store.create("a");
            Wal b = store.create("b");
            long before = store.sharedFlushCount();
            a.append(TestLogs.bytes("a1"), Durability.LOCAL);
            b.append(TestLogs.bytes("b1"), Durability.LOCAL);
            assertThat(store.sharedFlushCount()).isGreaterThan(before);
            assertThat(a.config().syncStrategy()).hasToString("store journal (fdatasync)");
        }
    }

    @Test
    void whatOnlyTheJournalHeldIsWrittenBackBeforeTheLogsOpen() throws IOException {
        Path image = dir.resolve("image");
        List<Long> lsns = new ArrayList<>();
        try (WalStore store = WalStore.open(small(dir.resolve("store")).build())) {
            Wal orders = store.create("orders");
            for (int i = 0; i < 50; i++) {
                lsns.add(orders.append(TestLogs.bytes("order " + i), Durability.LOCAL));
            }
            copy(dir.resolve("store"), image); // killed here
        }
        assertThat(StoreJournalFiles.spoilWhatTheJournalCovers(image)).isPositive();
        try (WalStore store = WalStore.open(small(image).build())) {
            Wal orders = store.log("orders").orElseThrow();
            try (WalReader r = orders.reader(lsns.get(0))) {
                for (int i = 0; i < 50; i++) {
                    WalRecord rec = r.next();
                    assertThat(rec.lsn()).isEqualTo(lsns.get(i));
                    assertThat(TestLogs.string(rec.payload())).isEqualTo("order " + i);
                }
                assertThat(r.next()).isNull();
            }
        }
    }

    @Test
    void aFlushLargerThanOneJournalEntryIsWrittenBackWhole() throws IOException {
        Path image = dir.resolve("image");
        byte[] big = new byte[3 << 20];
        new java.util.Random(42).nextBytes(big);
        long lsn;
        WalStoreConfig.Builder config = WalStoreConfig.builder(dir.resolve("store"))
                .defaults(b -> b.segmentSize(8L << 20).maxPayloadSize(4 << 20));
        try (WalStore store = WalStore.open(config.build())) {
            lsn = store.create("blobs").append(big, Durability.LOCAL); // one flush of three journal entries
            copy(dir.resolve("store"), image);
        }
        assertThat(StoreJournalFiles.spoilWhatTheJournalCovers(image)).isGreaterThanOrEqualTo(big.length);
        try (WalStore store = WalStore.open(WalStoreConfig.builder(image)
                .defaults(b -> b.segmentSize(8L << 20).maxPayloadSize(4 << 20)).build());
             WalReader r = store.log("blobs").orElseThrow().reader(lsn)) {
            assertThat(r.next().payload()).isEqualTo(big);
        }
    }

    @Test
    void recordsARewindRemovedNeverComeBackFromTheJournal() throws IOException {
        Path image = dir.resolve("image");
        long cut;
        try (WalStore store = WalStore.open(small(dir.resolve("store")).build())) {
            Wal replica = store.create("replica");
            List<Long> lsns = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                lsns.add(replica.append(TestLogs.bytes("record " + i), Durability.LOCAL));
            }
            cut = lsns.get(10);
            replica.replication().refuseAppends("a replica from now on");
            replica.replication().rewindTo(cut);
            replica.replication().promote(); // and what it appends from the cut on is its own again
            for (int i = 0; i < 5; i++) {
                replica.append(TestLogs.bytes("new " + i), Durability.LOCAL);
            }
            copy(dir.resolve("store"), image); // killed here, the rewound records' entries still in the journal
        }
        StoreJournalFiles.spoilWhatTheJournalCovers(image);
        try (WalStore store = WalStore.open(small(image).build())) {
            Wal replica = store.log("replica").orElseThrow();
            List<String> payloads = new ArrayList<>();
            try (WalReader r = replica.reader(replica.oldestLsn())) {
                for (WalRecord rec; (rec = r.next()) != null; ) {
                    payloads.add(TestLogs.string(rec.payload()));
                }
            }
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                expected.add("record " + i);
            }
            for (int i = 0; i < 5; i++) {
                expected.add("new " + i);
            }
            assertThat(payloads).isEqualTo(expected);
        }
    }

    @Test
    void checkpointsRemoveTheJournalsOldSegmentsAndWhatTheyCoveredStaysInTheFiles() throws Exception {
        Path image = dir.resolve("image");
        WalStoreConfig.Builder config = small(dir.resolve("store")).journalSegmentSize(256 << 10);
        List<List<Long>> lsns = new ArrayList<>();
        byte[] kib = new byte[1024];
        long written = 0;
        try (WalStore store = WalStore.open(config.build())) {
            List<Wal> logs = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                logs.add(store.create("log-" + i));
                lsns.add(new ArrayList<>());
            }
            for (int n = 0; n < 4096; n++) {
                kib[0] = (byte) n;
                lsns.get(n % 4).add(logs.get(n % 4).append(0, kib, 0, kib.length, Durability.LOCAL));
                written += kib.length;
            }
            long total = written;
            Eventually.waitUntil("the journal's checkpoints removed most of the " + total + " bytes written",
                    () -> store.journalHeldBytes() < total / 2);
            copy(dir.resolve("store"), image);
        }
        StoreJournalFiles.spoilWhatTheJournalCovers(image);
        try (WalStore store = WalStore.open(WalStoreConfig.builder(image).defaults(b -> b.segmentSize(SMALL_SEGMENT))
                .journalSegmentSize(256 << 10).build())) {
            for (int i = 0; i < 4; i++) {
                Wal log = store.log("log-" + i).orElseThrow();
                try (WalReader r = log.reader(lsns.get(i).get(0))) {
                    for (int k = 0; k < lsns.get(i).size(); k++) {
                        WalRecord rec = r.next();
                        assertThat(rec.lsn()).isEqualTo(lsns.get(i).get(k));
                        assertThat(rec.payload()[0]).isEqualTo((byte) (k * 4 + i));
                    }
                }
            }
        }
    }

    @Test
    void aDeletedLogsEntriesAreNotWrittenIntoALogMadeAgainUnderItsName() throws IOException {
        Path image = dir.resolve("image");
        long lsn;
        try (WalStore store = WalStore.open(small(dir.resolve("store")).build())) {
            Wal old = store.create("orders");
            for (int i = 0; i < 20; i++) {
                old.append(TestLogs.bytes("old " + i), Durability.LOCAL);
            }
            store.delete("orders");
            lsn = store.create("orders").append(TestLogs.bytes("new"), Durability.LOCAL);
            copy(dir.resolve("store"), image);
        }
        try (WalStore store = WalStore.open(small(image).build())) {
            Wal orders = store.log("orders").orElseThrow();
            try (WalReader r = orders.reader(orders.oldestLsn())) {
                WalRecord rec = r.next();
                assertThat(rec.lsn()).isEqualTo(lsn);
                assertThat(TestLogs.string(rec.payload())).isEqualTo("new");
                assertThat(r.next()).isNull();
            }
        }
    }

    @Test
    void aStoreOpenedWithoutTheJournalWritesBackWhatItHeldAndRemovesIt() throws IOException {
        Path image = dir.resolve("image");
        long lsn;
        try (WalStore store = WalStore.open(small(dir.resolve("store")).build())) {
            lsn = store.create("orders").append(TestLogs.bytes("only in the journal"), Durability.LOCAL);
            copy(dir.resolve("store"), image);
        }
        StoreJournalFiles.spoilWhatTheJournalCovers(image);
        try (WalStore store = WalStore.open(small(image).sharedJournal(false).build())) {
            try (WalReader r = store.log("orders").orElseThrow().reader(lsn)) {
                assertThat(TestLogs.string(r.next().payload())).isEqualTo("only in the journal");
            }
            assertThat(image.resolve(StoreJournal.DIRECTORY)).doesNotExist();
            assertThat(store.sharedFlushCount()).isZero();
        }
    }

    @Test
    void aStoresLogCannotBeOpenedOnItsOwn() {
        try (WalStore store = WalStore.open(small(dir).build())) {
            store.create("orders");
        }
        assertThatThrownBy(() -> Wal.open(TestLogs.small(dir.resolve(WalStore.LOGS).resolve("orders")).build()))
                .isInstanceOf(WalException.class)
                .hasMessageContaining("belongs to a store").hasMessageContaining("WalStore.open");
    }

    /** A copy of the store's files as they are now (the lock file aside): what a killed process leaves on disk. */
    private static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else if (!p.getFileName().toString().equals(WalStore.LOCK)) {
                    Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }
}
