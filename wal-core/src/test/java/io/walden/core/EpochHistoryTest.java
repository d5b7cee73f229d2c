package io.walden.core;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The history's arithmetic: which epoch wrote a log's end, and where a log must rewind to follow another. */
class EpochHistoryTest {
    private static final EpochHistory ONE_THEN_THREE = EpochHistory.of(List.of(new Epoch(1, 0), new Epoch(3, 1000)));

    @Test
    void theEpochAtAnEndIsTheLastThatBeganBeforeItNotOneBeginningThere() {
        assertThat(ONE_THEN_THREE.at(0).number()).isEqualTo(1);
        assertThat(ONE_THEN_THREE.at(999).number()).isEqualTo(1);
        assertThat(ONE_THEN_THREE.at(1000).number()).as("epoch 3 has written nothing ending at its start").isEqualTo(1);
        assertThat(ONE_THEN_THREE.at(1008).number()).isEqualTo(3);
    }

    @Test
    void aPromotionCanBeNumberedPastEpochsItNeverLived() {
        EpochHistory next = ONE_THEN_THREE.next(2000, 7);
        assertThat(next.current()).isEqualTo(new Epoch(7, 2000));
        assertThat(ONE_THEN_THREE.next(2000, 2).current().number()).isEqualTo(4);
    }

    @Test
    void aLogInAnEpochThisHistorySkippedRewindsToTheEndOfTheNewestEpochBothHold() {
        // It was elected as epoch 2 at 1200 and wrote to 1500 alone; this history went from epoch 1 to 3 at 1000.
        EpochHistory lostRival = EpochHistory.of(List.of(new Epoch(1, 0), new Epoch(2, 1200)));
        assertThat(ONE_THEN_THREE.rewindPointPastUnknownEpochs(lostRival, 1500)).isEqualTo(1000);
        // It began epoch 2 at 800, before this history's epoch 1 ended: back to its own epoch 1's end.
        EpochHistory earlyRival = EpochHistory.of(List.of(new Epoch(1, 0), new Epoch(2, 800)));
        assertThat(ONE_THEN_THREE.rewindPointPastUnknownEpochs(earlyRival, 900)).isEqualTo(800);
    }

    @Test
    void historiesThatShareNoEpochHaveNoRewindPoint() {
        EpochHistory stranger = EpochHistory.of(List.of(new Epoch(1, 64)));
        assertThat(ONE_THEN_THREE.rewindPointPastUnknownEpochs(stranger, 1500)).isEqualTo(-1);
    }
}
