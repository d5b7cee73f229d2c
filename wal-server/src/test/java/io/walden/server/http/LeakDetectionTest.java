package io.walden.server.http;

import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** What {@code walden serve} does to Netty's leak detector (the process-wide level is left alone here). */
class LeakDetectionTest {
    @Test
    void serveTurnsTheDetectorOffWhenNoLevelIsGiven() {
        assertThat(LeakDetection.levelForServe(Map.<String, String>of()::get)).isEqualTo(ResourceLeakDetector.Level.DISABLED);
    }

    @Test
    void aLevelGivenInTheProcessPropertiesIsLeftToNetty() {
        assertThat(LeakDetection.levelForServe(Map.of(LeakDetection.LEVEL_PROPERTY, "paranoid")::get)).isNull();
    }

    @Test
    void theLevelUnderNettysOlderPropertyNameIsLeftToNettyToo() {
        assertThat(LeakDetection.levelForServe(Map.of(LeakDetection.LEGACY_LEVEL_PROPERTY, "simple")::get)).isNull();
    }
}
