package io.walden.replication.primary;

import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDescriptor;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The primary's answers to a hello, in the order the checks are made (docs/replication-protocol.md, the hello). */
class HandshakeCheckTest {
    private static final long LOG = 0x5eed;
    private static final EpochHistory ONE_THEN_THREE = EpochHistory.of(List.of(new Epoch(1, 0), new Epoch(3, 8192)));
    private static final byte[] SECRET = "s3cret".getBytes();

    private static HandshakeCheck.Primary primary(boolean cascading, int replicas) {
        return new HandshakeCheck.Primary(ONE_THEN_THREE, LOG, 4096, 20_000, cascading, SECRET, false, replicas, replicas, 2);
    }

    private static Frame.Hello hello(long logId, int epoch, long epochStart, long start, byte[] secret) {
        return new Frame.Hello(FrameDescriptor.PROTOCOL_VERSION, logId, epoch, epochStart, start, "r1", secret);
    }

    private static int refusal(HandshakeCheck.Answer a) {
        assertThat(a).isInstanceOf(HandshakeCheck.Refuse.class);
        return ((HandshakeCheck.Refuse) a).code();
    }

    @Test
    void aWrongSecretIsRefusedBeforeAnythingAboutTheLogIsSaid() {
        assertThat(refusal(HandshakeCheck.answer(hello(0xbad, 3, 8192, 9000, "nope".getBytes()), primary(false, 0))))
                .isEqualTo(Frame.Error.AUTHENTICATION_FAILED);
    }

    @Test
    void aNewCopyIsToldWhoThePrimaryIs() {
        assertThat(HandshakeCheck.answer(hello(0, 1, 0, 64, SECRET), primary(false, 0))).isInstanceOf(HandshakeCheck.Identify.class);
    }

    @Test
    void aReplicaOfAnotherLogIsRefusedForGood() {
        assertThat(refusal(HandshakeCheck.answer(hello(0xbad, 3, 8192, 9000, SECRET), primary(false, 0))))
                .isEqualTo(Frame.Error.ANOTHER_LOG);
    }

    @Test
    void aReplicaInANewerEpochFindsThisPrimaryStale() {
        assertThat(refusal(HandshakeCheck.answer(hello(LOG, 4, 9000, 9500, SECRET), primary(false, 0))))
                .isEqualTo(Frame.Error.NOT_A_PRIMARY);
    }

    @Test
    void aReplicaInAnEpochThisHistorySkippedIsSentTheHistoryToRewindBy() {
        HandshakeCheck.Answer a = HandshakeCheck.answer(hello(LOG, 2, 9000, 9500, SECRET), primary(false, 0));
        assertThat(a).isInstanceOf(HandshakeCheck.Rewind.class);
        assertThat(((HandshakeCheck.Rewind) a).why()).contains("skipped");
    }

    @Test
    void aReplicaPastWhereItsEpochEndedRewindsBeforeBeingToldItsStartWasRemoved() {
        // Epoch 1 ended at 8192 here; the replica ends at 9000 in epoch 1, and 9000 is also below nothing removed.
        assertThat(HandshakeCheck.answer(hello(LOG, 1, 0, 9000, SECRET), primary(false, 0))).isInstanceOf(HandshakeCheck.Rewind.class);
        // Below the oldest kept LSN but inside its epoch: removed.
        assertThat(refusal(HandshakeCheck.answer(hello(LOG, 1, 0, 1024, SECRET), primary(false, 0)))).isEqualTo(Frame.Error.LSN_REMOVED);
    }

    @Test
    void aRivalPromotionOfTheSameNumberIsADivergedHistory() {
        assertThat(refusal(HandshakeCheck.answer(hello(LOG, 3, 8000, 9000, SECRET), primary(false, 0))))
                .isEqualTo(Frame.Error.EPOCH_DIVERGED);
    }

    @Test
    void aReplicaAheadOfWhatWasShippedIsDivergedFromAPrimaryButOnlyToldToRetryByACascadingReplica() {
        assertThat(refusal(HandshakeCheck.answer(hello(LOG, 3, 8192, 30_000, SECRET), primary(false, 0))))
                .isEqualTo(Frame.Error.EPOCH_DIVERGED);
        assertThat(refusal(HandshakeCheck.answer(hello(LOG, 3, 8192, 30_000, SECRET), primary(true, 0))))
                .isEqualTo(Frame.Error.NOT_A_PRIMARY);
    }

    @Test
    void aNewNameIsRefusedOnceEverySlotIsTakenAndAcceptedOtherwise() {
        assertThat(refusal(HandshakeCheck.answer(hello(LOG, 3, 8192, 9000, SECRET), primary(false, 2))))
                .isEqualTo(Frame.Error.TOO_MANY_REPLICAS);
        assertThat(HandshakeCheck.answer(hello(LOG, 3, 8192, 9000, SECRET), primary(false, 1))).isInstanceOf(HandshakeCheck.Accept.class);
    }

    private static Frame.StoreHello storeHello(String name, byte[] secret) {
        return new Frame.StoreHello(FrameDescriptor.STORE_PROTOCOL_VERSION, name, secret);
    }

    @Test
    void aVersion6HelloIsCheckedForItsSecretThenItsNameThenANameConnectedThenCapacity() {
        assertThat(refusal(HandshakeCheck.answerStore(storeHello("bad name!", "nope".getBytes()), SECRET, Set.of(), false, 0, 2)))
                .as("the secret first").isEqualTo(Frame.Error.AUTHENTICATION_FAILED);
        assertThat(refusal(HandshakeCheck.answerStore(storeHello("bad name!", SECRET), SECRET, Set.of(), false, 0, 2)))
                .isEqualTo(Frame.Error.MALFORMED);
        assertThat(refusal(HandshakeCheck.answerStore(storeHello("r1", SECRET), SECRET, Set.of("r1"), true, 1, 2)))
                .as("one connection per replica name").isEqualTo(Frame.Error.MALFORMED);
        assertThat(refusal(HandshakeCheck.answerStore(storeHello("r3", SECRET), SECRET, Set.of("r1", "r2"), false, 2, 2)))
                .isEqualTo(Frame.Error.TOO_MANY_REPLICAS);
        assertThat(HandshakeCheck.answerStore(storeHello("r2", SECRET), SECRET, Set.of("r1"), true, 2, 2))
                .as("a name with a slot takes no new place").isInstanceOf(HandshakeCheck.Accept.class);
        assertThat(HandshakeCheck.answerStore(storeHello("r1", new byte[0]), null, Set.of(), false, 0, 2))
                .isInstanceOf(HandshakeCheck.Accept.class);
    }

    @Test
    void eachLogOfAVersion6ConnectionIsCheckedAsAVersion5HelloOfThatLog() {
        Frame.Hello start = new Frame.Hello(FrameDescriptor.STORE_PROTOCOL_VERSION, 0xbad, 3, 8192, 9000, "r1", SECRET);
        assertThat(refusal(HandshakeCheck.answer(start, primary(false, 0)))).isEqualTo(Frame.Error.ANOTHER_LOG);
        Frame.Hello identity = new Frame.Hello(FrameDescriptor.STORE_PROTOCOL_VERSION, 0, 1, 0, 64, "r1", SECRET);
        assertThat(HandshakeCheck.answer(identity, primary(false, 0))).isInstanceOf(HandshakeCheck.Identify.class);
    }
}
