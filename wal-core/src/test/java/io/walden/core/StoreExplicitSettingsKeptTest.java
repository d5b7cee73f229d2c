package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A setting a log was explicitly given (at creation or by reconfigure) is kept with it, even when it
 * happened to equal the store's default then: a later change of the default must not change it (docs/operations.md,
 * "Named logs": "Settings a log was given over HTTP are kept with it across restarts").
 */
class StoreExplicitSettingsKeptTest {
    @TempDir
    Path dir;

    private WalStoreConfig withDefaultRetention(Duration d) {
        return WalStoreConfig.builder(dir).defaults(b -> b.segmentSize(SMALL_SEGMENT).retentionTime(d)).build();
    }

    @Test
    void aRetentionGivenAtCreationEqualToTheDefaultSurvivesALowerDefault() {
        try (WalStore store = WalStore.open(withDefaultRetention(Duration.ofDays(30)))) {
            store.create("audit", b -> b.retentionTime(Duration.ofDays(30)));
        }
        try (WalStore store = WalStore.open(withDefaultRetention(Duration.ofDays(1)))) {
            assertThat(store.log("audit").orElseThrow().config().retentionTime()).isEqualTo(Duration.ofDays(30));
        }
    }

    @Test
    void aRetentionGivenByReconfigureEqualToTheDefaultSurvivesALowerDefault() {
        try (WalStore store = WalStore.open(withDefaultRetention(Duration.ofDays(30)))) {
            store.create("audit", b -> b.retentionTime(Duration.ofDays(90)));
            store.reconfigure("audit", b -> b.retentionTime(Duration.ofDays(30)));
        }
        try (WalStore store = WalStore.open(withDefaultRetention(Duration.ofDays(1)))) {
            assertThat(store.log("audit").orElseThrow().config().retentionTime()).isEqualTo(Duration.ofDays(30));
        }
    }
}
