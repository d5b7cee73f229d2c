package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A server's data directory holds two things (docs/operations.md, "Named logs on disk"): the log named {@code default},
 * a plain {@link Wal} at the root, and a {@link WalStore} in the same directory ({@code logs/}, {@code journal/},
 * {@code walden-store.lock}). Neither takes the other's files for its own: each opens and recovers exactly its records,
 * in either order, with a creation a crash interrupted left in the store. Costs well under a second.
 */
class RootLogBesideStoreTest {
    @TempDir
    Path dir;

    private WalStoreConfig store() {
        return WalStoreConfig.builder(dir).defaults(b -> b.segmentSize(SMALL_SEGMENT)).build();
    }

    @Test
    void theRootLogAndTheStoreEachRecoverTheirOwnRecordsOnly() throws Exception {
        List<Long> root = new ArrayList<>();
        long order;
        try (WalStore s = WalStore.open(store()); Wal r = Wal.open(TestLogs.small(dir).build())) {
            order = s.create("orders").append(TestLogs.bytes("order"), Durability.LOCAL);
            for (int i = 0; i < 3; i++) {
                root.add(r.append(TestLogs.bytes("root " + i), Durability.LOCAL));
            }
        }
        // A creation a crash interrupted, as the store leaves it: no log, for either of them.
        Files.createDirectories(WalStore.buildingDirectory(dir, "invoices"));
        try (Wal r = Wal.open(TestLogs.small(dir).build()); WalReader reader = r.reader(root.get(0))) {
            for (int i = 0; i < 3; i++) {
                WalRecord rec = reader.next();
                assertThat(rec.lsn()).isEqualTo(root.get(i));
                assertThat(TestLogs.string(rec.payload())).isEqualTo("root " + i);
            }
            assertThat(reader.next()).isNull();
            try (WalStore s = WalStore.open(store()); WalReader orders = s.log("orders").orElseThrow().reader(order)) {
                assertThat(s.names()).containsExactly("orders");
                assertThat(TestLogs.string(orders.next().payload())).isEqualTo("order");
                assertThat(orders.next()).isNull();
            }
        }
        assertThat(WalStore.buildingDirectory(dir, "invoices")).doesNotExist();
    }
}
