package io.walden.server.cluster;

import io.walden.server.cluster.RecordingRoles.Call;
import io.walden.server.cluster.RecordingRoles.Kind;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ClusterLogs' operations on one cluster of three servers (real ZooKeeper, servers in this JVM) that every test
 * shares, each with logs of its own: copies capped by the servers, a replica count changed both ways, a log removed,
 * and a promotion refused by the listener.
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterLogsTest {
    private final List<Call> history = RecordingRoles.newHistory();
    private final Set<String> refuseOnce = ConcurrentHashMap.newKeySet();
    private final Map<String, ClusterMember> members = new TreeMap<>();
    private TestingServer zk;

    @BeforeAll
    void threeServers() throws Exception {
        zk = new TestingServer(true);
        ClusterAddress address = ClusterAddress.parse("zk://" + zk.getConnectString() + "/prod");
        ExecutorService joiners = Executors.newFixedThreadPool(3);
        try {
            List<Future<ClusterMember>> joins = new ArrayList<>();
            for (String name : List.of("s1", "s2", "s3")) {
                joins.add(joiners.submit(() -> ClusterMember.join(address, new ServerInfo(name, name + ":80", name + ":81"),
                        new RecordingRoles(name, history, refuseOnce), ClusterSettings.DEFAULTS)));
            }
            for (Future<ClusterMember> join : joins) {
                ClusterMember member = join.get(30, TimeUnit.SECONDS);
                members.put(member.self().name(), member);
            }
        } finally {
            joiners.shutdownNow();
        }
    }

    @AfterAll
    void leave() throws Exception {
        members.values().parallelStream().forEach(ClusterMember::close);
        zk.close();
    }

    @Test
    void aLogAskedForMoreCopiesThanThereAreServersGetsOneOnEachServer() throws Exception {
        assertThat(logs().add("wide", 5)).isTrue();

        Placement placed = await("wide", p -> p.settled() && p.current().size() == 3);
        assertThat(placed.replicas()).as("asked for").isEqualTo(5);
        assertThat(placed.serversIn(Role.REPLICA)).hasSize(2);
    }

    @Test
    void aLogGetsACopyMoreAndThenOneLessWhenItsReplicaCountChanges() throws Exception {
        logs().add("resized", 1);
        String primary = await("resized", p -> p.settled() && p.current().size() == 1).primary().orElseThrow();

        assertThat(logs().setReplicas("resized", 2)).isTrue();
        Placement grown = await("resized", p -> p.settled() && p.current().size() == 2);
        assertThat(grown.primary()).as("the primary stays").contains(primary);

        long shrinking = System.nanoTime();
        logs().setReplicas("resized", 1);
        Placement shrunk = await("resized", p -> p.settled() && p.current().size() == 1);
        String gone = grown.serversIn(Role.REPLICA).get(0);
        assertThat(shrunk.current()).doesNotContainKey(gone);
        awaitCall(shrinking, gone, "resized", Kind.DROP);
        assertThat(logs().setReplicas("no-such-log", 2)).isFalse();
    }

    @Test
    void aRemovedLogsPrimaryStepsDownAndEveryCopyIsDropped() throws Exception {
        logs().add("removed", 2);
        Placement placed = await("removed", p -> p.settled() && p.current().size() == 2);

        long removing = System.nanoTime();
        assertThat(logs().remove("removed")).isTrue();
        awaitCall(removing, placed.primary().orElseThrow(), "removed", Kind.STEP_DOWN);
        for (String server : placed.current().keySet()) {
            awaitCall(removing, server, "removed", Kind.DROP);
        }
        assertThat(logs().placement("removed")).isEmpty();
        assertThat(logs().remove("removed")).as("removed again").isFalse();
    }

    @Test
    void aPromotionTheListenerRefusesLeavesThatCopyInErrorAndTheOtherReplicaLeads() throws Exception {
        refuseOnce.add("refused");
        long adding = System.nanoTime();
        logs().add("refused", 2);

        Placement after = await("refused", p -> p.serversIn(Role.ERROR).size() == 1 && p.primary().isPresent());
        String refuser = after.serversIn(Role.ERROR).get(0);
        assertThat(RecordingRoles.since(history, adding, Kind.REFUSED_PRIMARY)).singleElement()
                .extracting(Call::server).isEqualTo(refuser);
        assertThat(after.primary().orElseThrow()).isNotEqualTo(refuser);
        assertThat(logs().summary().servers()).filteredOn(s -> s.name().equals(refuser))
                .singleElement().extracting(ClusterSummary.Server::errors).isEqualTo(1);

        long removing = System.nanoTime();
        logs().remove("refused"); // an ERROR copy stops Helix's balancing everywhere: the other tests share the cluster
        awaitCall(removing, refuser, "refused", Kind.DROP);
    }

    @Test
    void aCopyInErrorIsResetAfterItsGraceAndPlacedAgainAsAReplica() throws Exception {
        refuseOnce.add("healed");
        logs().add("healed", 2);
        Placement refused = await("healed", p -> p.serversIn(Role.ERROR).size() == 1 && p.primary().isPresent());
        String refuser = refused.serversIn(Role.ERROR).get(0);
        ErrorCopies errors = new ErrorCopies(members.get(refuser).logs(), refuser, 500);
        long checking = System.nanoTime();
        errors.check(logs().placements());
        Thread.sleep(100);
        errors.check(logs().placements());
        assertThat(logs().placement("healed").orElseThrow().current().get(refuser)).as("within the grace")
                .isEqualTo(Role.ERROR);

        Placement healed = await("healed", p -> {
            errors.check(logs().placements());
            return p.serversIn(Role.ERROR).isEmpty() && p.current().containsKey(refuser) && p.primary().isPresent();
        });
        assertThat(System.nanoTime() - checking).as("not before the grace").isGreaterThan(TimeUnit.MILLISECONDS.toNanos(500));
        assertThat(healed.primary()).as("a primary all along (WAGED may hand it to the healed copy)").isPresent();
        assertThat(RecordingRoles.since(history, checking, Kind.BECOME_OFFLINE)).as("ERROR → OFFLINE")
                .anyMatch(c -> c.server().equals(refuser) && c.log().equals("healed"));
        awaitCall(checking, refuser, "healed", Kind.BECOME_REPLICA);

        long removing = System.nanoTime();
        logs().remove("healed");
        awaitCall(removing, refuser, "healed", Kind.DROP);
    }

    private ClusterLogs logs() {
        return members.get("s1").logs();
    }

    private Placement await(String log, Predicate<Placement> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            Placement placement = logs().placement(log).orElseThrow();
            if (condition.test(placement)) {
                return placement;
            }
            assertThat(System.nanoTime()).as("%s: %s", log, placement).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    private void awaitCall(long since, String server, String log, Kind kind) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (RecordingRoles.since(history, since, kind).stream()
                .noneMatch(c -> c.server().equals(server) && c.log().equals(log))) {
            assertThat(System.nanoTime()).as("%s on %s for %s", kind, server, log).isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
