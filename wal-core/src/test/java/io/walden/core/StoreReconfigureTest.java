package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link WalStore#reconfigure}: a log's own settings changed while the store runs, the log reopened with them, nothing
 * it acknowledged lost, the change kept for every later open.
 */
class StoreReconfigureTest {
    @TempDir
    Path dir;

    private WalStoreConfig small() {
        return WalStoreConfig.builder(dir).defaults(b -> b.segmentSize(SMALL_SEGMENT)).build();
    }

    @Test
    void aLogReopensWithItsChangedSettingsAndEveryRecordItAcknowledged() {
        try (WalStore store = WalStore.open(small())) {
            Wal before = store.create("orders", b -> b.retentionTime(Duration.ofHours(1)));
            long lsn = before.append(TestLogs.bytes("kept"), Durability.LOCAL);

            Wal after = store.reconfigure("orders", b -> b.retentionBytes(1L << 30).durability(Durability.LOCAL));

            assertThat(before.isClosed()).isTrue();
            assertThat(store.log("orders")).containsSame(after);
            assertThat(after.config().retentionBytes()).isEqualTo(1L << 30);
            assertThat(after.config().durability()).isEqualTo(Durability.LOCAL);
            assertThat(after.config().retentionTime()).as("what it was created with").isEqualTo(Duration.ofHours(1));
            try (WalReader r = after.reader(lsn)) {
                assertThat(TestLogs.string(r.next().payload())).isEqualTo("kept");
            }
            after.append(TestLogs.bytes("after"), Durability.LOCAL);
        }
    }

    @Test
    void theChangedSettingsAreKeptForTheNextOpen() {
        try (WalStore store = WalStore.open(small())) {
            store.create("orders");
            store.reconfigure("orders", b -> b.compression(Compression.LZ4).retentionTime(Duration.ofMinutes(5)));
        }
        try (WalStore store = WalStore.open(small())) {
            WalConfig c = store.log("orders").orElseThrow().config();
            assertThat(c.compression()).isEqualTo(Compression.LZ4);
            assertThat(c.retentionTime()).isEqualTo(Duration.ofMinutes(5));
        }
    }

    @Test
    void aRefusedSettingLeavesTheLogOpenAsItWas() {
        try (WalStore store = WalStore.open(small())) {
            Wal orders = store.create("orders");

            assertThatThrownBy(() -> store.reconfigure("orders", b -> b.retentionBytes(-1)))
                    .isInstanceOf(IllegalSettingException.class);

            assertThat(orders.isClosed()).isFalse();
            assertThat(store.log("orders")).containsSame(orders);
            orders.append(TestLogs.bytes("still appending"), Durability.LOCAL);
        }
    }

    @Test
    void theSegmentSizeCannotChange() {
        try (WalStore store = WalStore.open(small())) {
            store.create("orders");

            Wal after = store.reconfigure("orders", b -> b.segmentSize(4 * SMALL_SEGMENT));

            assertThat(after.config().segmentSize()).isEqualTo(SMALL_SEGMENT);
        }
    }

    @Test
    void anUnknownLogIsRefused() {
        try (WalStore store = WalStore.open(small())) {
            assertThatThrownBy(() -> store.reconfigure("nope", b -> b.retentionBytes(1)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("nope");
        }
    }

    @Test
    void replacedSettingsAreExactlyTheOnesGivenAndTheSameOnesLeaveTheLogOpenAsItIs() {
        WalStoreConfig config = WalStoreConfig.builder(dir)
                .defaults(b -> b.segmentSize(SMALL_SEGMENT).retentionTime(Duration.ofDays(1))).build();
        try (WalStore store = WalStore.open(config)) {
            Wal created = store.create("orders", b -> b.retentionTime(Duration.ofDays(7)).compression(Compression.LZ4));
            long lsn = created.append(TestLogs.bytes("kept"), Durability.LOCAL);
            List<Wal> readied = new ArrayList<>();

            assertThat(store.replaceSettings("orders", b -> b.retentionTime(Duration.ofDays(7)).compression(Compression.LZ4),
                    readied::add)).as("the settings it has: not reopened").isSameAs(created);
            assertThat(readied).isEmpty();

            Wal replaced = store.replaceSettings("orders", b -> b.compression(Compression.LZ4), readied::add);
            assertThat(created.isClosed()).isTrue();
            assertThat(readied).containsExactly(replaced);
            assertThat(store.log("orders")).containsSame(replaced);
            assertThat(replaced.config().retentionTime()).as("not given: the store's default").isEqualTo(Duration.ofDays(1));
            assertThat(replaced.config().compression()).isEqualTo(Compression.LZ4);
            assertThat(replaced.status().logId()).isEqualTo(created.status().logId());
            try (WalReader r = replaced.reader(lsn)) {
                assertThat(TestLogs.string(r.next().payload())).isEqualTo("kept");
            }
        }
    }

    @Test
    void aReopenedLogsRetentionKeepsWhatItsReplicasNeededFromItsFirstLook() throws Exception {
        try (WalStore store = WalStore.open(small())) {
            Wal before = store.create("orders");
            long needed = -1; // a record in the log's second segment: a replica's slot holds it
            while (before.insertLsn() < 5 * SMALL_SEGMENT) {
                long lsn = before.append(new byte[1000], Durability.LOCAL);
                if (needed < 0 && lsn >= SMALL_SEGMENT) {
                    needed = lsn;
                }
            }
            long slot = needed;
            before.replication().retentionFloor(() -> slot);

            Wal after = store.reconfigure("orders", b -> b.retentionBytes(1)); // every sealed segment may go

            waitUntil(() -> !after.status().retention().heldBy().isEmpty());
            assertThat(after.status().retention().heldBy()).singleElement()
                    .satisfies(h -> assertThat(h.holder()).isEqualTo("replication_slot"));
            assertThat(after.oldestLsn()).as("what the slot needs is kept").isLessThanOrEqualTo(slot);
        }
    }
}
