package io.walden.core;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;

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
        assertThat(c.idleAfter()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void anIdlePeriodThatIsNotPositiveIsRefusedNamingIt() {
        for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofMillis(-1)}) {
            assertThatThrownBy(() -> WalConfig.builder(dir).idleAfter(bad).build())
                    .isInstanceOf(IllegalSettingException.class).hasMessageContaining("idleAfter");
        }
        assertThat(WalConfig.builder(dir).idleAfter(Duration.ofMillis(1)).build().idleAfter()).hasMillis(1);
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
    void eachConceptsRecordHoldsWhatTheBuilderSetAndTheNamedAccessorsRead() {
        WalConfig c = WalConfig.builder(dir).segmentSize(1L << 20).spareSegments(0).durability(Durability.LOCAL)
                .commitSiblings(2).checkpointInterval(Duration.ofSeconds(3)).retentionBytes(1L << 30)
                .compression(Compression.ZSTD).zstdLevel(5).logId(7).baseLsn(2L << 20).build();

        assertThat(c.segmentSettings()).isEqualTo(new SegmentSettings(1L << 20, c.maxPayloadSize(), c.walBuffers(), 0));
        assertThat(c.commitSettings()).isEqualTo(new CommitSettings(Durability.LOCAL, SyncMethod.FDATASYNC,
                Duration.ofMillis(200), Duration.ofMillis(2), Duration.ZERO, 2, Duration.ZERO));
        assertThat(c.recoverySettings()).isEqualTo(new RecoverySettings(Duration.ofSeconds(3), false, false));
        assertThat(c.retentionSettings()).isEqualTo(new RetentionSettings(null, 1L << 30, 4L << 30));
        assertThat(c.compressionSettings()).isEqualTo(new CompressionSettings(Compression.ZSTD, true, 5));
        assertThat(c.identitySettings()).isEqualTo(new IdentitySettings(7, 2L << 20));
    }

    @Test
    void aConfigHoldsItsSizesResolvedWhereTheBuilderLeftThemAtTheDefault() {
        SegmentSettings sizes = WalConfig.builder(dir).segmentSize(1L << 20).build().segmentSettings();

        assertThat(sizes.maxPayloadSize()).isEqualTo(WalConfig.largestPayloadFor(1L << 20));
        assertThat(sizes.walBuffers()).as("the segment size, smaller than 32 MiB").isEqualTo(1L << 20);
    }

    @Test
    void aSettingIsRefusedWhenTheConfigIsBuiltNotWhenItIsSet() {
        WalConfig.Builder b = WalConfig.builder(dir).commitDelay(Duration.ofSeconds(5)).retentionBytes(-1);

        assertThatThrownBy(b::build).isInstanceOf(IllegalSettingException.class).hasMessageContaining("commitDelay");
        assertThat(b.commitDelay(Duration.ZERO).retentionBytes(0).build().commitDelay()).isZero();
    }

    @Test
    void aNullWhereAValueIsNeededIsRefusedWhenItIsSetNamingTheSetting() {
        assertThatThrownBy(() -> WalConfig.builder(dir).commitDelay(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("commitDelay");
        assertThatThrownBy(() -> WalConfig.builder(dir).compression(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("compression");
    }

    @Test
    void aBuilderChangedAfterABuildLeavesTheConfigItBuiltAsItWas() {
        WalConfig.Builder b = WalConfig.builder(dir).zstdLevel(4);
        WalConfig first = b.build();

        b.zstdLevel(9).durability(Durability.OFF);

        assertThat(first.zstdLevel()).isEqualTo(4);
        assertThat(first.durability()).isEqualTo(Durability.ON);
    }

    @Test
    void aSizeOfAnotherConceptThatTheSegmentSizeBoundsIsRefusedNamingIt() {
        assertThatThrownBy(() -> WalConfig.builder(dir).segmentSize(1L << 20).baseLsn(4096).build())
                .isInstanceOf(IllegalSettingException.class).hasMessageContaining("baseLsn")
                .hasMessageContaining("multiple of " + (1L << 20));
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
