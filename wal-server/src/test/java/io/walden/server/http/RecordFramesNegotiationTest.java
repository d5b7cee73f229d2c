package io.walden.server.http;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Which answer a read's {@code Accept} gets: frames only when it ranks application/octet-stream above JSON. */
class RecordFramesNegotiationTest {
    private static final String JSON = "application/json";

    @Test
    void octetStreamAloneGetsFrames() {
        assertThat(RecordFrames.prefersFrames("application/octet-stream", JSON)).isTrue();
        assertThat(RecordFrames.prefersFrames("Application/Octet-Stream", JSON)).isTrue();
    }

    @Test
    void bothListedWithoutRankingGetJson() {
        assertThat(RecordFrames.prefersFrames("application/json, application/octet-stream", JSON)).isFalse();
        assertThat(RecordFrames.prefersFrames("application/octet-stream, */*", JSON)).isFalse();
    }

    @Test
    void aHigherQualityForOctetStreamGetsFrames() {
        assertThat(RecordFrames.prefersFrames("application/json;q=0.5, application/octet-stream", JSON)).isTrue();
        assertThat(RecordFrames.prefersFrames("application/octet-stream, */*;q=0.1", JSON)).isTrue();
    }

    @Test
    void refusedOrAbsentOctetStreamGetsJson() {
        assertThat(RecordFrames.prefersFrames("application/octet-stream;q=0", JSON)).isFalse();
        assertThat(RecordFrames.prefersFrames(null, JSON)).isFalse();
        assertThat(RecordFrames.prefersFrames("*/*", JSON)).isFalse();
    }

    @Test
    void theMostSpecificRangeDecidesATypesQuality() {
        assertThat(RecordFrames.quality("application/*;q=0.2, application/json;q=0.7", JSON)).isEqualTo(0.7);
        assertThat(RecordFrames.quality("*/*;q=0.3, application/*;q=0.6", "application/x-ndjson")).isEqualTo(0.6);
        assertThat(RecordFrames.quality("application/json;q=bad", JSON)).as("malformed: 1").isEqualTo(1);
    }
}
