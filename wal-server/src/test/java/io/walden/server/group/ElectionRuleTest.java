package io.walden.server.group;

import io.walden.replication.policy.SyncPolicy;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.TreeMap;

import static io.walden.server.group.Member.State.FENCED;
import static io.walden.server.group.Member.State.LOOKING;
import static io.walden.server.group.Member.State.PRIMARY;
import static io.walden.server.group.Member.State.REPLICA;
import static io.walden.server.group.Member.State.STARTING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ElectionRuleTest {
    private static final EpochRecord EPOCH_3_LED_BY_A = new EpochRecord(3, "a", 1000, null, 0, 7);
    private static final SyncPolicy ANY_1_OF_ABC = SyncPolicy.parse("ANY 1 (a, b, c)");

    private static Member member(String name, Member.State state, int epoch, long flushed) {
        return new Member(name, "127.0.0.1:1", "127.0.0.1:2", state, epoch, flushed);
    }

    /** A member with named logs: {@code logs} alternates a name and a position ({@code "orders", 5000L}), in epoch 3. */
    private static Member withLogs(String name, long defaultFlushed, Object... logs) {
        Map<String, Member.LogPosition> named = new TreeMap<>();
        for (int i = 0; i < logs.length; i += 2) {
            named.put((String) logs[i], new Member.LogPosition(0xabcL, 1, (Long) logs[i + 1]));
        }
        return new Member(name, "127.0.0.1:1", "127.0.0.1:2", LOOKING, 3, defaultFlushed, named);
    }

    private static Map<String, Member> live(Member... members) {
        Map<String, Member> m = new TreeMap<>();
        for (Member x : members) {
            m.put(x.name(), x);
        }
        return m;
    }

    @Test
    void shouldElectNobodyWhileThePrimaryIsAMember() {
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A,
                live(member("a", FENCED, 3, 5000), member("b", LOOKING, 3, 4000)), null);
        assertThat(e.candidate()).isNull();
        assertThat(e.reason()).contains("primary a is a member");
    }

    @Test
    void shouldElectTheMostCaughtUpLookingMemberOnceThePrimaryIsGone() {
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A,
                live(member("b", LOOKING, 3, 4000), member("c", LOOKING, 3, 4500)), ANY_1_OF_ABC);
        assertThat(e.candidate()).isEqualTo("c");
    }

    @Test
    void shouldWaitWhileAMemberStillFollows() {
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A,
                live(member("b", LOOKING, 3, 4000), member("c", REPLICA, 3, 4500)), null);
        assertThat(e.candidate()).isNull();
        assertThat(e.reason()).contains("c to stop following");
        assertThat(ElectionRule.decide(EPOCH_3_LED_BY_A, live(member("b", LOOKING, 3, 4000), member("c", STARTING, 0, 0)), null)
                .candidate()).isNull();
    }

    @Test
    void shouldWaitForEnoughPolicyMembersThatOneOfThemHoldsEveryAcknowledgedRecord() {
        // ANY 1 over {b, c} (a was the primary): an ON record was on b or c, so both must report.
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A, live(member("b", LOOKING, 3, 4000)), ANY_1_OF_ABC);
        assertThat(e.candidate()).isNull();
        assertThat(e.reason()).contains("waiting for 2");
        // ANY 2 over {b, c}: every ON record was on both, so one report is enough.
        assertThat(ElectionRule.decide(EPOCH_3_LED_BY_A, live(member("b", LOOKING, 3, 4000)), SyncPolicy.parse("ANY 2 (a, b, c)"))
                .candidate()).isEqualTo("b");
    }

    @Test
    void shouldNeverElectAMemberTheSyncPolicyDoesNotName() {
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A,
                live(member("b", LOOKING, 3, 4000), member("c", LOOKING, 3, 4000), member("d", LOOKING, 3, 9000)),
                ANY_1_OF_ABC);
        assertThat(e.candidate()).isEqualTo("b");
    }

    @Test
    void shouldLetAReturnedPrimaryCountAloneForItHoldsAllItAcknowledged() {
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A, live(member("a", LOOKING, 3, 5000)), ANY_1_OF_ABC);
        assertThat(e.candidate()).isEqualTo("a");
    }

    @Test
    void shouldNotLetAReturnedPrimaryWithNoLogOrAnEarlierEpochBypassTheQuorum() {
        ElectionRule.Election emptyDisk = ElectionRule.decide(EPOCH_3_LED_BY_A,
                live(member("a", LOOKING, 0, 0), member("b", LOOKING, 3, 4000)), ANY_1_OF_ABC);
        assertThat(emptyDisk.candidate()).as("a back on an empty disk").isNull();
        ElectionRule.Election neverLived = ElectionRule.decide(EPOCH_3_LED_BY_A,
                live(member("a", LOOKING, 2, 900), member("b", LOOKING, 3, 4000)), ANY_1_OF_ABC);
        assertThat(neverLived.candidate()).as("a elected but never wrote in epoch 3").isNull();
    }

    @Test
    void shouldNeverCountOrWaitForAFailedMember() {
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A,
                live(member("b", LOOKING, 3, 4000), member("c", Member.State.FAILED, 3, 9000)), null);
        assertThat(e.candidate()).isEqualTo("b");
        assertThat(ElectionRule.decide(EPOCH_3_LED_BY_A,
                live(member("b", LOOKING, 3, 4000), member("c", Member.State.FAILED, 3, 9000)), ANY_1_OF_ABC).candidate())
                .as("c cannot report: b alone may lack what only c confirmed").isNull();
    }

    @Test
    void shouldRankALaterEpochAboveAHigherPositionInAnEarlierOne() {
        // c holds an unacknowledged tail of epoch 2 beyond where b's epoch 3 began: b's history wins.
        EpochRecord epoch3LedByD = new EpochRecord(3, "d", 1000, null, 0, 2);
        ElectionRule.Election e = ElectionRule.decide(epoch3LedByD,
                live(member("b", LOOKING, 3, 1200), member("c", LOOKING, 2, 1500)), null);
        assertThat(e.candidate()).isEqualTo("b");
    }

    @Test
    void shouldBreakTiesByTheSmallestName() {
        assertThat(ElectionRule.decide(EPOCH_3_LED_BY_A,
                live(member("c", LOOKING, 3, 4000), member("b", LOOKING, 3, 4000)), null).candidate()).isEqualTo("b");
    }

    @Test
    void shouldElectOnlyAMemberThatHoldsTheHighestPositionOfEveryLogUnderAny1() {
        // c is ahead on default, but b alone holds the end of orders: an ON record of orders may be on b only.
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A, live(withLogs("b", 4000, "orders", 9000L,
                "audit", 300L), withLogs("c", 4500, "orders", 8000L, "audit", 300L)), ANY_1_OF_ABC);
        assertThat(e.candidate()).isNull();
        ElectionRule.Election dominated = ElectionRule.decide(EPOCH_3_LED_BY_A, live(withLogs("b", 4500, "orders", 9000L,
                "audit", 300L), withLogs("c", 4500, "orders", 8000L, "audit", 300L)), ANY_1_OF_ABC);
        assertThat(dominated.candidate()).isEqualTo("b");
    }

    @Test
    void shouldElectNobodyWhenPositionsCrossAndNameTheLogsAndMembersBehind() {
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A, live(withLogs("b", 4000, "orders", 9000L),
                withLogs("c", 4500, "orders", 8000L)), ANY_1_OF_ABC);
        assertThat(e.candidate()).isNull();
        assertThat(e.reason()).contains("b is behind on log default").contains("c is behind on log orders");
    }

    @Test
    void shouldPlanTheTailsTheBestCandidateLacksWhenPositionsCrossInOneEpoch() {
        // b and c are each highest on one log; c is the more caught up on default, so it copies orders' tail from b.
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A, live(withLogs("b", 4000, "orders", 9000L,
                "audit", 300L), withLogs("c", 4500, "orders", 8000L, "audit", 300L)), ANY_1_OF_ABC);
        assertThat(e.candidate()).isNull();
        assertThat(e.catchUp()).isEqualTo(new ElectionRule.CatchUp("c",
                java.util.List.of(new ElectionRule.Tail("orders", 0xabcL, "b", 8000, 9000))));
        assertThat(e.reason()).contains("c copies log orders [0/1F40, 0/2328) from b first");
        // Once c holds the tail, it reaches every bound and is elected as usual.
        assertThat(ElectionRule.decide(EPOCH_3_LED_BY_A, live(withLogs("b", 4000, "orders", 9000L, "audit", 300L),
                withLogs("c", 4500, "orders", 9000L, "audit", 300L)), ANY_1_OF_ABC).candidate()).isEqualTo("c");
    }

    @Test
    void shouldPlanOnlyACandidateWhoseMissingTailsAreInItsOwnEpoch() {
        // b's orders is in a later epoch than c's: c cannot take b's tail (the histories may differ), but b can take
        // default's tail from c (both in epoch 3), so b is the one to catch up, though c ranks higher.
        Member b = new Member("b", "127.0.0.1:1", "127.0.0.1:2", LOOKING, 3, 4000,
                Map.of("orders", new Member.LogPosition(0xabcL, 2, 9000L)));
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A, live(b, withLogs("c", 4500, "orders", 9500L)),
                ANY_1_OF_ABC);
        assertThat(e.catchUp()).isEqualTo(new ElectionRule.CatchUp("b",
                java.util.List.of(new ElectionRule.Tail("default", 0, "c", 4000, 4500))));
    }

    @Test
    void shouldPlanNoTailWhenNoMemberHoldsEveryLogOrTheMissingPartIsInAnotherEpoch() {
        Member b = new Member("b", "127.0.0.1:1", "127.0.0.1:2", LOOKING, 2, 5000,
                Map.of("orders", new Member.LogPosition(0xabcL, 2, 9000L)));
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A, live(b, withLogs("c", 4500, "orders", 8000L)),
                ANY_1_OF_ABC);
        assertThat(e.candidate()).isNull();
        assertThat(e.catchUp()).isNull();
        assertThat(e.reason()).contains("lost primary a");
    }

    @Test
    void shouldElectTheMemberHighestOnTheMostLogsWithoutAPolicyForNoReplicaWasWaitedFor() {
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A, live(withLogs("b", 4000, "orders", 9000L,
                "audit", 500L), withLogs("c", 4500, "orders", 8000L, "audit", 400L)), null);
        assertThat(e.candidate()).isEqualTo("b");
        assertThat(e.reason()).contains("the highest on 2 of its 3 logs");
    }

    @Test
    void shouldCountALogAMemberDoesNotHoldAsPositionZero() {
        // orders was created just before a was lost and reached only c: c alone may hold its acknowledged records.
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A, live(withLogs("b", 4500),
                withLogs("c", 4000, "orders", 100L)), ANY_1_OF_ABC);
        assertThat(e.candidate()).isNull();
        assertThat(e.reason()).contains("b is behind on log orders (does not hold it");
        assertThat(e.catchUp().member()).as("only c holds every log: it copies default's tail from b").isEqualTo("c");
        assertThat(ElectionRule.decide(EPOCH_3_LED_BY_A, live(withLogs("b", 4000), withLogs("c", 4000, "orders", 100L)),
                ANY_1_OF_ABC).candidate()).isEqualTo("c");
    }

    @Test
    void shouldTellALogCreatedAgainUnderItsNameFromTheOneDeleted() {
        Member b = withLogs("b", 4000, "orders", 9000L);
        Member c = new Member("c", "127.0.0.1:1", "127.0.0.1:2", LOOKING, 3, 4000,
                Map.of("orders", new Member.LogPosition(0xdefL, 1, 100L)));
        // b holds the old orders far along, c the new one: neither holds both, whatever the positions.
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A, live(b, c), ANY_1_OF_ABC);
        assertThat(e.candidate()).isNull();
        assertThat(e.catchUp()).as("a tail of another log is not a tail").isNull();
    }

    @Test
    void shouldAskEveryLogOnlyForTheKthHighestPositionWhenAllNamedMembersReport() {
        // ANY 2 over {b, c, d}: an ON record is on two of the three, so the second highest bounds each log.
        SyncPolicy any2 = SyncPolicy.parse("ANY 2 (a, b, c, d)");
        Map<String, Member> all = live(withLogs("b", 4000, "orders", 9000L), withLogs("c", 4500, "orders", 8000L),
                withLogs("d", 3000, "orders", 7000L));
        assertThat(ElectionRule.decide(EPOCH_3_LED_BY_A, all, any2).candidate()).as("b and c each reach both bounds")
                .isIn("b", "c");
        // Two of three report: the (2 - (3 - 2)) = first highest of theirs bounds each log.
        Map<String, Member> two = live(withLogs("b", 4000, "orders", 9000L), withLogs("d", 3000, "orders", 7000L));
        assertThat(ElectionRule.decide(EPOCH_3_LED_BY_A, two, any2).candidate()).isEqualTo("b");
        Map<String, Member> crossing = live(withLogs("b", 4000, "orders", 7000L), withLogs("d", 4500, "orders", 6000L));
        assertThat(ElectionRule.decide(EPOCH_3_LED_BY_A, crossing, SyncPolicy.parse("FIRST 2 (a, b, c, d)")).candidate())
                .isNull();
    }

    @Test
    void shouldElectAReturnedPrimaryWhenTheReplicasPositionsCross() {
        Member a = new Member("a", "127.0.0.1:1", "127.0.0.1:2", LOOKING, 3, 4000,
                Map.of("orders", new Member.LogPosition(0xabcL, 1, 8500L)));
        ElectionRule.Election e = ElectionRule.decide(EPOCH_3_LED_BY_A, live(a, withLogs("b", 4000, "orders", 8200L),
                withLogs("c", 4500, "orders", 8000L)), ANY_1_OF_ABC);
        assertThat(e.candidate()).isEqualTo("a");
        // A replica that holds all a holds, on every log, is as safe as a.
        assertThat(ElectionRule.decide(EPOCH_3_LED_BY_A, live(a, withLogs("b", 4000, "orders", 9000L),
                withLogs("c", 4500, "orders", 8000L)), ANY_1_OF_ABC).candidate()).isEqualTo("b");
    }

    @Test
    void shouldPublishEveryLogsPositionAndReadANodeWithoutThem() {
        Member m = withLogs("b", 4000, "orders", 9000L, "audit", 12L);
        assertThat(new String(m.toJson())).contains("\"logs\":{\"audit\":{\"log_id\":\"abc\",\"epoch\":1,\"flushed_lsn\":12}");
        assertThat(Member.fromJson(m.toJson())).isEqualTo(m);
        Member old = Member.fromJson(("{\"name\":\"b\",\"http\":\"h:1\",\"replication\":\"h:2\",\"state\":\"looking\","
                + "\"epoch\":3,\"flushed_lsn\":4000}").getBytes());
        assertThat(old.logs()).isEmpty();
        assertThat(old.flushedLsn()).isEqualTo(4000);
    }

    @Test
    void shouldElectOnlyTheSwitchoverTargetAndOnlyOnceItHoldsThePrimarysEnd() {
        EpochRecord handover = new EpochRecord(3, "a", 1000, "c", 6000, 8);
        Map<String, Member> behind = live(member("a", FENCED, 3, 6000), member("b", LOOKING, 3, 6000), member("c", LOOKING, 3, 5000));
        assertThat(ElectionRule.decide(handover, behind, null).candidate()).isNull();
        Map<String, Member> caughtUp = live(member("a", FENCED, 3, 6000), member("b", LOOKING, 3, 6000), member("c", LOOKING, 3, 6000));
        assertThat(ElectionRule.decide(handover, caughtUp, null).candidate()).isEqualTo("c");
    }

    @Test
    void shouldStartANewGroupWithTheMemberThatAlreadyHasTheMostLog() {
        assertThat(ElectionRule.decide(null, live(member("a", LOOKING, 0, 0), member("b", LOOKING, 1, 300)), null)
                .candidate()).isEqualTo("b");
        assertThat(ElectionRule.decide(null, live(member("b", LOOKING, 0, 0), member("a", LOOKING, 0, 0)), null)
                .candidate()).isEqualTo("a");
        assertThat(ElectionRule.decide(null, live(member("a", LOOKING, 0, 0), member("b", STARTING, 0, 0)), null)
                .candidate()).isNull();
        assertThat(ElectionRule.decide(null, live(member("a", PRIMARY, 1, 0)), null).candidate()).isEqualTo("a");
    }

    @Test
    void shouldParseACoordinatorUriAndRefuseMalformedOnes() {
        CoordinatorUri uri = CoordinatorUri.parse("zk://zk1:2181,zk2:2182/walden/orders");
        assertThat(uri.connectString()).isEqualTo("zk1:2181,zk2:2182");
        assertThat(uri.path()).isEqualTo("/walden/orders");
        for (String bad : new String[] {"zk1:2181/x", "zk://zk1:2181", "zk://zk1:2181/", "zk://zk1/x", "zk://zk1:99999/x", "zk://zk1:2181/a//b"}) {
            assertThatThrownBy(() -> CoordinatorUri.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void shouldRoundTripTheRecordsItKeepsInZooKeeper() {
        Member m = member("b", REPLICA, 4, 123456789L);
        assertThat(Member.fromJson(m.toJson())).isEqualTo(m);
        EpochRecord r = new EpochRecord(5, "b", 4096, "c", 8192, 3);
        assertThat(EpochRecord.fromJson(r.toJson(), 3)).isEqualTo(r);
        EpochRecord plain = new EpochRecord(5, "b", 4096, null, 0, 1);
        assertThat(EpochRecord.fromJson(plain.toJson(), 1)).isEqualTo(plain);
        assertThatThrownBy(() -> Member.fromJson("{}".getBytes())).isInstanceOf(IllegalArgumentException.class);
    }
}
