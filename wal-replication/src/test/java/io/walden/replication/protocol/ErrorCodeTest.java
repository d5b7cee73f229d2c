package io.walden.replication.protocol;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Which Error frames end a replica's attempts (docs/replication-protocol.md, "Error codes": 1 to 5 are final). */
class ErrorCodeTest {
    @Test
    void shouldTakeCodesOneToFiveAsFinalAndTheRestAsRetryLater() {
        for (ErrorCode c : ErrorCode.values()) {
            assertThat(c.isFinal()).as("%s (%d)", c, c.code()).isEqualTo(c.code() >= 1 && c.code() <= 5);
            assertThat(new Frame.Error(c.code(), "x").isFinal()).isEqualTo(c.isFinal());
        }
    }

    @Test
    void shouldTakeACodeThisVersionDoesNotKnowAsNotFinal() {
        assertThat(ErrorCode.of(99)).isNull();
        assertThat(new Frame.Error(99, "a newer primary's code").isFinal()).isFalse();
    }

    @Test
    void shouldGiveEachWireNumberOneCode() {
        for (ErrorCode c : ErrorCode.values()) {
            assertThat(ErrorCode.of(c.code())).isSameAs(c);
        }
    }
}
