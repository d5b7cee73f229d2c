package io.walden.server.cluster;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Who may lead a log (docs/cluster.md, "Who may lead a log"), against a real ZooKeeper: only an in-sync server may
 * claim a log, one claim wins per record read, and a deposed primary can change nothing.
 */
@Timeout(60)
class LogLeadershipTest {
    private static TestingServer zk;
    private static CuratorFramework client;
    private static LogLeadership leadership;

    @BeforeAll
    static void start() throws Exception {
        zk = new TestingServer(true);
        client = CuratorFrameworkFactory.newClient(zk.getConnectString(), new RetryOneTime(100));
        client.start();
        leadership = new LogLeadership(client, "/walden/test");
    }

    @AfterAll
    static void stop() throws Exception {
        client.close();
        zk.close();
    }

    @Test
    void theFirstPrimaryOfALogLeadsEpochOneAloneInSync() throws Exception {
        LeadershipRecord first = leadership.claim("first", "a", leadership.read("first"));

        assertThat(first.epoch()).isEqualTo(1);
        assertThat(first.primary()).isEqualTo("a");
        assertThat(first.inSync()).containsExactly("a");
        assertThat(leadership.read("first")).isEqualTo(first);
    }

    @Test
    void aServerInSyncTakesOverInTheNextEpochWithoutThePrimaryThatDidNotStepDown() throws Exception {
        LeadershipRecord led = leadership.claim("takeover", "a", leadership.read("takeover"));
        led = leadership.expand("takeover", "a", led.epoch(), "b");
        leadership.expand("takeover", "a", led.epoch(), "c");

        LeadershipRecord next = leadership.claim("takeover", "b", leadership.read("takeover")); // a failed over

        assertThat(next.epoch()).isEqualTo(2);
        assertThat(next.primary()).isEqualTo("b");
        assertThat(next.inSync()).as("a, deposed, joins again as a replica").containsExactly("b", "c");
    }

    @Test
    void aServerTakingOverFromAPrimaryThatSteppedDownKeepsItInSync() throws Exception {
        LeadershipRecord led = leadership.claim("handover", "a", leadership.read("handover"));
        led = leadership.expand("handover", "a", led.epoch(), "b");
        leadership.stepDown("handover", "a", led.epoch());

        LeadershipRecord next = leadership.claim("handover", "b", leadership.read("handover"));

        assertThat(next.inSync()).as("a follows b from now on").containsExactly("a", "b");
        assertThat(next.steppedDown()).isFalse();
    }

    @Test
    void aServerNotInSyncIsRefusedTheLog() throws Exception {
        leadership.claim("refused", "a", leadership.read("refused"));

        assertThatThrownBy(() -> leadership.claim("refused", "c", leadership.read("refused")))
                .isInstanceOf(LeadershipRefusedException.class).hasMessageContaining("not in sync");
        assertThat(leadership.read("refused").primary()).isEqualTo("a");
    }

    @Test
    void twoServersClaimingFromTheSameRecordCannotBothWin() throws Exception {
        LeadershipRecord led = leadership.claim("race", "a", leadership.read("race"));
        led = leadership.expand("race", "a", led.epoch(), "b");
        leadership.expand("race", "a", led.epoch(), "c");
        LeadershipRecord seen = leadership.read("race");

        leadership.claim("race", "b", seen);

        assertThatThrownBy(() -> leadership.claim("race", "c", seen)).isInstanceOf(LeadershipRefusedException.class)
                .hasMessageContaining("changed meanwhile");
        assertThat(leadership.read("race").primary()).isEqualTo("b");
        assertThat(leadership.read("race").epoch()).isEqualTo(2);
    }

    @Test
    void aDeposedPrimaryCanNeitherDropNorAddAReplica() throws Exception {
        LeadershipRecord led = leadership.claim("deposed", "a", leadership.read("deposed"));
        led = leadership.expand("deposed", "a", led.epoch(), "b");
        leadership.claim("deposed", "b", leadership.read("deposed"));
        int oldEpoch = led.epoch();

        assertThatThrownBy(() -> leadership.shrink("deposed", "a", oldEpoch, "b"))
                .isInstanceOf(LeadershipRefusedException.class).hasMessageContaining("b leads epoch 2");
        assertThatThrownBy(() -> leadership.expand("deposed", "a", oldEpoch, "c"))
                .isInstanceOf(LeadershipRefusedException.class);
        assertThat(leadership.read("deposed").inSync()).as("as b's claim wrote it").containsExactly("b");
    }

    @Test
    void aReplicaDroppedFromTheInSyncSetMayNoLongerLead() throws Exception {
        LeadershipRecord led = leadership.claim("dropped", "a", leadership.read("dropped"));
        led = leadership.expand("dropped", "a", led.epoch(), "b");

        LeadershipRecord shrunk = leadership.shrink("dropped", "a", led.epoch(), "b");

        assertThat(shrunk.inSync()).containsExactly("a");
        assertThatThrownBy(() -> leadership.claim("dropped", "b", leadership.read("dropped")))
                .isInstanceOf(LeadershipRefusedException.class);
        assertThatThrownBy(() -> leadership.shrink("dropped", "a", shrunk.epoch(), "a"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aDeletedLogsRecordIsGoneAndItsNextPrimaryStartsAtEpochOne() throws Exception {
        leadership.claim("gone", "a", leadership.read("gone"));
        leadership.delete("gone");

        assertThat(leadership.read("gone").isNone()).isTrue();
        assertThat(leadership.claim("gone", "c", leadership.read("gone")).epoch()).isEqualTo(1);
    }

    @Test
    void twoWritersOfThePrimaryChangingTheRecordAtOnceBothSucceedWithoutDeposingIt() throws Exception {
        LeadershipRecord led = leadership.claim("busy", "a", leadership.read("busy"));
        int epoch = led.epoch();
        // the primary's in-sync keeper and a hand-over, each changing the record as a replica comes and goes
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        for (String replica : List.of("b", "c")) {
            writers.add(CompletableFuture.runAsync(() -> {
                try {
                    for (int i = 0; i < 50; i++) {
                        leadership.expand("busy", "a", epoch, replica);
                        leadership.shrink("busy", "a", epoch, replica);
                    }
                    leadership.expand("busy", "a", epoch, replica);
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }));
        }

        CompletableFuture.allOf(writers.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);

        assertThat(leadership.read("busy").inSync()).containsExactly("a", "b", "c");
        assertThat(leadership.read("busy").primary()).isEqualTo("a");
    }

    @Test
    void aReplicaThatLostItsCopyLeavesTheInSyncSetButThePrimaryStaysInIt() throws Exception {
        LeadershipRecord led = leadership.claim("leave", "a", leadership.read("leave"));
        leadership.expand("leave", "a", led.epoch(), "b");

        assertThat(leadership.leave("leave", "b").inSync()).containsExactly("a");
        assertThat(leadership.leave("leave", "a").inSync()).containsExactly("a");
        assertThat(leadership.read("leave").primary()).isEqualTo("a");
    }
}
