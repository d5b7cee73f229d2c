package io.walden.server.cluster;

import io.walden.replication.TcpProxy;
import io.walden.server.cluster.RecordingRoles.Call;
import io.walden.server.cluster.RecordingRoles.Kind;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Isolated;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Helix places a cluster's logs (ClusterMember, ClusterLogs) on real ZooKeeper, with three servers in this JVM, each
 * with its own {@link RecordingRoles}: six logs of two copies each, balanced; a server that leaves or is cut off
 * hands its primaries to their replicas; a fourth server takes its share. Each test prints what it measured.
 */
@Timeout(60)
@Isolated // alone: it checks the order of a cut-off server's warning and its session's expiry, which a loaded JVM blurs
class ClusterPlacementTest {
    private static final int LOGS = 6;
    private static final int COPIES = 2;
    private static final AtomicInteger CLUSTERS = new AtomicInteger();
    /**
     * s3's session: shorter than the default 6 s to keep the cut-off test short (the ZooKeeper here grants it);
     * {@code -Dwalden.cluster.sessionMs=6000} measures the default.
     */
    private static final Duration S3_SESSION = Duration.ofMillis(Long.getLong("walden.cluster.sessionMs", 3000));
    private static TestingServer zk;

    private final List<Call> history = RecordingRoles.newHistory();
    private final Map<String, ClusterMember> members = new TreeMap<>();
    private ClusterAddress address;
    /** s3 reaches ZooKeeper through it: blackholed, s3 is cut off (a partition, a frozen process). */
    private TcpProxy s3Link;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zk = new TestingServer(true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zk.close();
    }

    @BeforeEach
    void threeServersJoinAtOnceAndSixLogsArePlaced() throws Exception {
        address = ClusterAddress.parse("zk://" + zk.getConnectString() + "/walden/t" + CLUSTERS.incrementAndGet());
        s3Link = TcpProxy.start(new InetSocketAddress("127.0.0.1", zk.getPort()), 0);
        ClusterAddress viaLink = new ClusterAddress("127.0.0.1:" + s3Link.address().getPort(), address.chroot(),
                address.clusterName());
        long start = System.nanoTime();
        ExecutorService joiners = Executors.newFixedThreadPool(3);
        try {
            List<Future<ClusterMember>> joins = new ArrayList<>();
            joins.add(joiners.submit(() -> join(address, "s1")));
            joins.add(joiners.submit(() -> join(address, "s2")));
            joins.add(joiners.submit(() -> join(viaLink, "s3", S3_SESSION)));
            for (Future<ClusterMember> join : joins) {
                ClusterMember member = join.get(30, TimeUnit.SECONDS);
                members.put(member.self().name(), member);
            }
        } finally {
            joiners.shutdownNow();
        }
        for (int i = 0; i < LOGS; i++) {
            assertThat(logs().add("log" + i, COPIES)).isTrue();
        }
        assertThat(logs().add("log0", COPIES)).as("added again").isFalse();
        long joined = System.nanoTime();
        awaitSettled(List.of("s1", "s2", "s3"));
        System.out.printf("[cluster] 3 servers joined in %d ms, 6 logs placed in %d ms more%n",
                TimeUnit.NANOSECONDS.toMillis(joined - start), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - joined));
    }

    @AfterEach
    void leave() {
        s3Link.blackhole(false);
        members.values().parallelStream().forEach(ClusterMember::close); // a close takes up to a second or so
        s3Link.close();
    }

    @Test
    void sixLogsOfTwoCopiesGetOnePrimaryAndOneReplicaEachOnTwoServersAndThePrimariesAreBalanced() {
        Map<String, Integer> primaries = new TreeMap<>();
        for (Placement p : placements().values()) {
            assertThat(p.serversIn(Role.PRIMARY)).as(p.log()).hasSize(1);
            assertThat(p.serversIn(Role.REPLICA)).as(p.log()).hasSize(1).doesNotContainAnyElementsOf(p.serversIn(Role.PRIMARY));
            primaries.merge(p.primary().orElseThrow(), 1, Integer::sum);
            Call promoted = RecordingRoles.since(history, 0, Kind.BECOME_PRIMARY).stream()
                    .filter(c -> c.log().equals(p.log())).reduce((a, b) -> b).orElseThrow();
            assertThat(promoted.server()).as("the listener of %s's primary was told", p.log()).isEqualTo(p.primary().get());
        }
        System.out.println("[cluster] primaries per server with 3 servers, 6 logs: " + primaries
                + ", promotions while placing: " + RecordingRoles.since(history, 0, Kind.BECOME_PRIMARY).size());
        assertThat(primaries.values()).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(3)); // ceil(6/3)+1

        ClusterSummary summary = logs().summary();
        assertThat(summary.liveServers()).isEqualTo(3);
        assertThat(summary.logs()).isEqualTo(LOGS);
        assertThat(summary.controller()).isIn("s1", "s2", "s3");
        assertThat(summary.servers()).allSatisfy(s -> assertThat(s.httpAddress()).isEqualTo(s.name() + ":80"));
        assertThat(summary.servers().stream().mapToInt(ClusterSummary.Server::primaries).sum()).isEqualTo(LOGS);
        assertThat(summary.servers().stream().mapToInt(ClusterSummary.Server::replicas).sum()).isEqualTo(LOGS);
    }

    @Test
    void aServerThatLeavesHandsEachOfItsPrimariesToThatLogsReplicaAndANewReplicaIsPlaced() throws Exception {
        String victim = busiestPrimary();
        failOver(victim, "close", () -> members.remove(victim).close());
    }

    @Test
    void aServerCutOffFromZooKeeperIsWarnedThenLosesItsPrimariesToTheirReplicasOnceItsSessionExpires() throws Exception {
        assertThat(placements().values().stream().filter(p -> p.primary().orElseThrow().equals("s3")))
                .as("s3 leads some logs").isNotEmpty();
        List<String> s3Logs = placements().values().stream().filter(p -> p.current().containsKey("s3"))
                .map(Placement::log).toList();
        long start = System.nanoTime();
        failOver("s3", "session loss (" + S3_SESSION.toMillis() + " ms timeout)",
                () -> s3Link.blackhole(true));

        Call lost = RecordingRoles.since(history, start, Kind.CONNECTION_LOST).stream()
                .filter(c -> c.server().equals("s3")).findFirst().orElseThrow();
        Call firstPromotion = RecordingRoles.since(history, start, Kind.BECOME_PRIMARY).get(0);
        System.out.printf("[cluster]   s3 heard connectionLost after %d ms, %d ms before the first promotion elsewhere%n",
                TimeUnit.NANOSECONDS.toMillis(lost.nanos() - start),
                TimeUnit.NANOSECONDS.toMillis(firstPromotion.nanos() - lost.nanos()));
        assertThat(lost.nanos()).as("s3 warned before any of its logs is promoted elsewhere")
                .isLessThan(firstPromotion.nanos());

        s3Link.blackhole(false); // s3 reconnects, finds its session expired, and is told every role ended, then restored
        long healed = System.nanoTime();
        long deadline = healed + TimeUnit.SECONDS.toNanos(20);
        while (RecordingRoles.since(history, start, Kind.CONNECTION_RESTORED).stream().noneMatch(c -> c.server().equals("s3"))) {
            assertThat(System.nanoTime()).as("s3 restored").isLessThan(deadline);
            Thread.sleep(20);
        }
        long restored = RecordingRoles.since(history, start, Kind.CONNECTION_RESTORED).get(0).nanos();
        System.out.printf("[cluster]   healed: s3 restored on a new session %d ms later%n",
                TimeUnit.NANOSECONDS.toMillis(restored - healed));
        assertThat(RecordingRoles.since(history, start, Kind.SESSION_ENDED).stream()
                .filter(c -> c.server().equals("s3") && c.nanos() < restored).map(Call::log))
                .as("every log s3 held ended before the restoration").containsAll(s3Logs);
    }

    @Test
    void aFourthServerTakesItsShareAndThePrimariesStayBalanced() throws Exception {
        Map<String, String> before = primaries();
        long start = System.nanoTime();
        members.put("s4", join(address, "s4"));
        awaitSettled(List.of("s1", "s2", "s3", "s4"));
        long settledMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        Map<String, Integer> primaries = new TreeMap<>();
        long onS4 = 0;
        for (Placement p : placements().values()) {
            primaries.merge(p.primary().orElseThrow(), 1, Integer::sum);
            onS4 += p.current().containsKey("s4") ? 1 : 0;
        }
        System.out.printf("[cluster] join of s4: settled after %d ms; copies on s4: %d; primaries per server: %s;"
                        + " promotions: %d, new replicas: %d, drops: %d%n", settledMs, onS4, primaries,
                RecordingRoles.since(history, start, Kind.BECOME_PRIMARY).size(),
                RecordingRoles.since(history, start, Kind.BECOME_REPLICA).size(),
                RecordingRoles.since(history, start, Kind.DROP).size());
        System.out.println("[cluster]   primaries before " + before + ", after " + primaries());
        assertThat(onS4).as("copies moved onto s4").isGreaterThan(0);
        assertThat(primaries.values()).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(3)); // ceil(6/4)+1
    }

    /**
     * Takes {@code victim} out with {@code cut} and follows the cluster until every log has its two copies on the
     * others: no sample of the external view shows two primaries of a log, each of the victim's logs is first promoted
     * on the server that was its replica, and a new replica is placed on the third server.
     */
    private void failOver(String victim, String how, ThrowingRunnable cut) throws Exception {
        Map<String, String> replicaOf = new HashMap<>(); // the victim's logs -> their replica before
        placements().forEach((log, p) -> {
            if (p.primary().orElseThrow().equals(victim)) {
                replicaOf.put(log, p.serversIn(Role.REPLICA).get(0));
            }
        });
        Map<String, String> before = primaries();
        boolean wasController = members.get(victim).isController();
        long start = System.nanoTime();
        cut.run();
        List<String> survivors = members.keySet().stream().filter(s -> !s.equals(victim)).toList();
        int samples = 0;
        while (!settledOn(survivors)) {
            for (Placement p : placements().values()) {
                assertThat(p.serversIn(Role.PRIMARY)).as("primaries of %s", p.log()).hasSizeLessThanOrEqualTo(1);
            }
            samples++;
            assertThat(System.nanoTime() - start).as("settled in time").isLessThan(TimeUnit.SECONDS.toNanos(40));
            Thread.sleep(20);
        }
        long settledMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        Map<String, Long> promotedAfterMs = new TreeMap<>();
        for (Map.Entry<String, String> e : replicaOf.entrySet()) {
            Call first = RecordingRoles.since(history, start, Kind.BECOME_PRIMARY).stream()
                    .filter(c -> c.log().equals(e.getKey())).findFirst().orElseThrow();
            assertThat(first.server()).as("%s promoted on its replica", e.getKey()).isEqualTo(e.getValue());
            promotedAfterMs.put(e.getKey(), TimeUnit.NANOSECONDS.toMillis(first.nanos() - start));
            Placement now = logs().placement(e.getKey()).orElseThrow();
            assertThat(now.current()).as(e.getKey()).doesNotContainKey(victim).hasSize(COPIES);
        }
        System.out.printf("[cluster] %s of %s (controller: %s): its %d primaries promoted on their replicas after %s ms;"
                        + " all settled after %d ms (%d samples, never two primaries); promotions: %d, new replicas: %d%n",
                how, victim, wasController, replicaOf.size(), promotedAfterMs, settledMs, samples,
                RecordingRoles.since(history, start, Kind.BECOME_PRIMARY).size(),
                RecordingRoles.since(history, start, Kind.BECOME_REPLICA).size());
        System.out.println("[cluster]   primaries before " + before + ", after " + primaries());
    }

    private Map<String, String> primaries() {
        Map<String, String> primaries = new TreeMap<>();
        placements().forEach((log, p) -> primaries.put(log, p.primary().orElse("-")));
        return primaries;
    }

    private ClusterMember join(ClusterAddress at, String name) throws Exception {
        return join(at, name, ClusterSettings.DEFAULTS.sessionTimeout());
    }

    private ClusterMember join(ClusterAddress at, String name, Duration sessionTimeout) throws Exception {
        return ClusterMember.join(at, new ServerInfo(name, name + ":80", name + ":81"),
                new RecordingRoles(name, history), ClusterSettings.DEFAULTS.withSessionTimeout(sessionTimeout));
    }

    private ClusterLogs logs() {
        return members.values().iterator().next().logs();
    }

    private Map<String, Placement> placements() {
        return logs().placements();
    }

    private String busiestPrimary() {
        Map<String, Integer> primaries = new TreeMap<>();
        placements().values().forEach(p -> primaries.merge(p.primary().orElseThrow(), 1, Integer::sum));
        return primaries.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
    }

    /** Every log settled, with its two copies on {@code servers} only, and every one of them holding some. */
    private boolean settledOn(List<String> servers) {
        Map<String, Placement> placements = placements();
        boolean everyServerUsed = servers.stream().allMatch(server -> placements.values().stream()
                .anyMatch(p -> p.current().containsKey(server)));
        return placements.size() == LOGS && everyServerUsed && placements.values().stream().allMatch(p -> p.settled()
                && p.current().size() == COPIES && servers.containsAll(p.current().keySet()));
    }

    private void awaitSettled(List<String> servers) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!settledOn(servers)) {
            assertThat(System.nanoTime()).as("settled on %s: %s", servers, placements()).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
