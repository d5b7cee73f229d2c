package io.walden.server.logging;

import io.walden.server.config.Values;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Sizes and durations in log lines read as a setting is written, and read back as the same value where one is set. */
class UnitsTest {
    @Test
    void sizesTakeTheLargestBinaryUnitThatHoldsThemExactly() {
        assertThat(Units.size(100L << 30)).isEqualTo("100GiB");
        assertThat(Units.size(64L << 20)).isEqualTo("64MiB");
        assertThat(Units.size(4096)).isEqualTo("4KiB");
        assertThat(Units.size(1536L << 20)).isEqualTo("1536MiB");
        assertThat(Units.size(1000)).isEqualTo("1000B");
        assertThat(Units.size(0)).isEqualTo("0B");
    }

    @Test
    void durationsTakeTheLargestUnitThatHoldsThemExactly() {
        assertThat(Units.duration(Duration.ofDays(7))).isEqualTo("7d");
        assertThat(Units.duration(Duration.ofHours(36))).isEqualTo("36h");
        assertThat(Units.duration(Duration.ofSeconds(90))).isEqualTo("90s");
        assertThat(Units.duration(Duration.ofMinutes(5))).isEqualTo("5m");
        assertThat(Units.duration(Duration.ofMillis(200))).isEqualTo("200ms");
        assertThat(Units.duration(Duration.ZERO)).isEqualTo("0s");
        assertThat(Units.millis(6000)).isEqualTo("6s");
    }

    @Test
    void whatIsShownReadsBackAsTheSameValueWhereASettingTakesIt() {
        for (long bytes : new long[] {1, 1000, 4096, 64L << 20, 3L << 30, 100L << 30, 5L << 40}) {
            assertThat(Values.size(Units.size(bytes))).isEqualTo(bytes);
        }
        for (Duration d : new Duration[] {Duration.ofMillis(1), Duration.ofMillis(1500), Duration.ofSeconds(61),
                Duration.ofMinutes(90), Duration.ofDays(106751)}) {
            assertThat(Values.duration(Units.duration(d), null)).isEqualTo(d);
        }
        assertThat(Values.duration(Units.duration(Duration.ZERO), ChronoUnit.MILLIS)).isZero();
    }
}
