package io.walden.core;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WalConfigTest {
    private final Path dir = Path.of("unused");

    @Test
    void shouldDefaultToTheSafeSettings() {
        WalConfig c = WalConfig.builder(dir).build();
        assertThat(c.durability()).isEqualTo(Durability.ON);
        assertThat(c.syncMethod()).isEqualTo(SyncMethod.FDATASYNC);
        assertThat(c.segmentSize()).isEqualTo(64L << 20);
        assertThat(c.maxPayloadSize()).isEqualTo(16 << 20);
        assertThat(c.writerDelay().toMillis()).isEqualTo(200);
        assertThat(c.truncateAtCorruption()).isFalse();
    }

    @Test
    void shouldShrinkTheDefaultMaximumPayloadToWhatASmallSegmentHolds() {
        WalConfig c = WalConfig.builder(dir).segmentSize(64 << 10).build();
        assertThat(c.maxPayloadSize()).isEqualTo((64 << 10) - 64 - 56); // segment header, timed header, closing header
    }

    @Test
    void shouldRefuseSegmentSizesThatAreNotPowersOfTwoInRange() {
        for (long bad : new long[] {0, 1000, 32 << 10, (64 << 10) + 8, 2L << 30}) {
            assertThatThrownBy(() -> WalConfig.builder(dir).segmentSize(bad).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("power of two");
        }
    }

    @Test
    void shouldRefuseZstdLevelsZstdDoesNotHave() {
        for (int bad : new int[] {0, 23, Integer.MIN_VALUE}) {
            assertThatThrownBy(() -> WalConfig.builder(dir).zstdLevel(bad).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("zstdLevel");
        }
        assertThat(WalConfig.builder(dir).build().zstdLevel()).isEqualTo(1);
        assertThat(WalConfig.builder(dir).zstdLevel(-5).build().zstdLevel()).isEqualTo(-5);
    }

    @Test
    void shouldRefuseAMaximumPayloadThatASegmentCannotHold() {
        assertThatThrownBy(() -> WalConfig.builder(dir).segmentSize(64 << 10).maxPayloadSize(64 << 10).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxPayloadSize");
    }

    @Test
    void shouldParseDurabilityInPostgreSqlSpelling() {
        assertThat(Durability.parse("remote_apply")).isEqualTo(Durability.REMOTE_APPLY);
        assertThat(Durability.parse("ON")).isEqualTo(Durability.ON);
        assertThat(Durability.REMOTE_WRITE.configName()).isEqualTo("remote_write");
        assertThatThrownBy(() -> Durability.parse("sometimes")).hasMessageContaining("sometimes")
                .hasMessageContaining("remote_apply");
    }
}
