package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Lsn;
import io.walden.core.WrittenSegments;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.walden.core.Eventually.holdsWithin;
import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cluster's kill loop (issue #38, docs/cluster.md): ZooKeeper (Curator's TestingServer, in this JVM), three servers
 * as jar processes, logs of 2 copies each with a client appending at {@code on} to every one, while servers are killed
 * -9 and started again under their names on their files, and a fourth server joins the cluster. At the end, every
 * acknowledged record of every log is at its LSN on the log's primary, each replica's copy is byte for byte the
 * primary's, no log had two leaders in one epoch nor an epoch going back, and the primaries are balanced.
 *
 * <p>The build runs a short loop ({@code walden.cluster.logs} logs, {@code walden.cluster.kills} kills); {@code -Psoak}
 * runs the (30 logs, kills for {@code walden.cluster.loopSeconds} = 10 min) and records the failover times in
 * {@code target/cluster-kill-loop/failover-times.txt}. The servers' output and data stay in the temporary directory
 * when the test fails (its path is printed).
 */
@Isolated // runs alone: its failovers run on ZooKeeper session timeouts of a few seconds, on two cores
class ClusterKillLoopIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int LOGS = Integer.getInteger("walden.cluster.logs", 12);
    private static final int KILLS = Integer.getInteger("walden.cluster.kills", 3);
    private static final long LOOP_SECONDS = Long.getLong("walden.cluster.loopSeconds", 0);
    /** The session timeout the servers ask for; ZooKeeper ticks every 300 ms here and grants 0.6 to 6 s. */
    private static final int SESSION_MS = Integer.getInteger("walden.cluster.sessionMs", 3000);
    private static final int TICK_MS = 300;
    private static final List<String> FIRST_THREE = List.of("a", "b", "c");
    private static final String JOINING = "d";

    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path work;
    @RegisterExtension
    final TestWatcher reportFailure = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            reportServers();
        }
    };
    private TestingServer zk;
    private ClusterProcesses servers;
    private final long started = System.nanoTime();

    @BeforeEach
    void startZooKeeper() throws Exception {
        zk = new TestingServer(new InstanceSpec(work.resolve("zk").toFile(), -1, -1, -1, false, 1, TICK_MS, 100), true);
        servers = new ClusterProcesses(work, zk.getConnectString(), SESSION_MS);
    }

    @AfterEach
    void stopAll() throws Exception {
        servers.close();
        zk.close();
    }

    @Test
    void keepsEveryAcknowledgedRecordWithOneLeaderPerEpochThroughKillsAndAJoiningServer() throws Exception {
        long seed = Long.getLong("walden.cluster.seed", System.nanoTime());
        System.out.printf("ClusterKillLoopIT: %d logs of 2 copies, at least %d kills over at least %d s, %d ms sessions, "
                + "seed %d (-Dwalden.cluster.seed=%d repeats the choices)%n", LOGS, KILLS, LOOP_SECONDS, SESSION_MS, seed, seed);
        Random random = new Random(seed);
        for (String name : FIRST_THREE) {
            servers.add(name);
        }
        servers.add(JOINING); // known to the clients from the start, as a client's list of servers would be
        servers.startTogether(FIRST_THREE);
        phase("three servers started");
        List<String> logs = createLogs();
        phase("logs created");
        Set<String> running = new TreeSet<>(FIRST_THREE);
        awaitSettled(logs, running);
        phase("logs settled");
        FailoverTimes times = new FailoverTimes();
        long began = System.nanoTime();
        try (ClusterAppends load = new ClusterAppends(logs, servers, 20);
             LeadershipWatch watch = new LeadershipWatch(servers)) {
            try {
                load.awaitEveryLogAcknowledgedAfter(began, 30);
                while (times.kills() < KILLS || System.nanoTime() - began < TimeUnit.SECONDS.toNanos(LOOP_SECONDS)) {
                    String victim = FIRST_THREE.get(random.nextInt(FIRST_THREE.size()));
                    times.add(killAndRestart(victim, random, logs, running, load, watch));
                }
                joinFourthServer(logs, running, load);
                phase("fourth server joined");
                awaitSettled(logs, running);
                phase("settled");
                load.awaitEveryLogAcknowledgedAfter(System.nanoTime(), 30);
            } finally {
                load.stop();
                watch.stop();
                load.write(work.resolve("acks.tsv")); // kept with the servers' files if the test fails
                System.out.printf("ClusterKillLoopIT: %d appends acknowledged; the clients met %s; %d leadership epochs "
                        + "seen in %d readings of the cluster%n%s", load.count(), load.refusals(), watch.epochsSeen(),
                        watch.readings(), times.report());
            }
            record(times);
            assertThat(watch.violations()).as("leadership records over time").isEmpty();
            assertBalanced(running);
            phase("balanced");
            Map<String, Long> ends = assertEveryAcknowledgedRecordIsOnItsPrimary(logs, load);
            phase("records checked on the primaries");
            assertReplicasAreThePrimarysCopy(logs, ends);
            phase("replicas compared");
        }
    }

    /** Prints how far the test is, in seconds since it began: where its time goes. */
    private void phase(String what) {
        System.out.printf("ClusterKillLoopIT: %.1f s: %s%n", (System.nanoTime() - started) / 1e9, what);
    }

    /** Creates the logs at once, each at one of the servers in turn; returns their names. */
    private List<String> createLogs() throws Exception {
        List<String> logs = new ArrayList<>();
        ExecutorService creations = Executors.newFixedThreadPool(LOGS);
        try {
            List<Future<HttpResponse<String>>> created = new ArrayList<>();
            for (int i = 0; i < LOGS; i++) {
                String log = String.format("log-%02d", i);
                logs.add(log);
                ServerProcess at = servers.get(FIRST_THREE.get(i % FIRST_THREE.size())).process();
                created.add(creations.submit(() -> at.send("POST", "/v1/logs",
                        "{\"name\": \"" + log + "\", \"settings\": {\"replicas\": 2}}")));
            }
            for (Future<HttpResponse<String>> f : created) {
                HttpResponse<String> answer = f.get();
                assertThat(answer.statusCode()).as(answer.body()).isEqualTo(201);
            }
        } finally {
            creations.shutdownNow();
        }
        return logs;
    }

    /**
     * Kills {@code victim} with SIGKILL, leaves it down for up to two session timeouts (a restart within one finds its
     * old session still there), starts it again, and waits until every log takes appends again; returns what the kill
     * cost the logs it held.
     */
    private FailoverTimes.Kill killAndRestart(String victim, Random random, List<String> logs, Set<String> running,
                                              ClusterAppends load, LeadershipWatch watch) throws Exception {
        awaitSettled(logs, running);
        JsonNode before = servers.cluster();
        List<String> led = new ArrayList<>();
        List<String> replicated = new ArrayList<>();
        for (String log : logs) {
            JsonNode l = before.path("logs").path(log);
            if (victim.equals(l.path("leader").asText())) {
                led.add(log);
            } else if (names(l.path("replicas")).contains(victim)) {
                replicated.add(log);
            }
        }
        long killed = servers.get(victim).kill();
        running.remove(victim);
        long down = random.nextInt(2 * SESSION_MS + 1);
        Thread.sleep(down); // the time it stays down, chosen: not a wait for a condition
        servers.get(victim).start();
        running.add(victim);
        load.awaitEveryLogAcknowledgedAfter(killed, 90);
        Map<String, Long> leaders = new TreeMap<>();
        for (String log : led) {
            watch.firstChangeAfter(log, killed).ifPresent(c -> leaders.put(log, TimeUnit.NANOSECONDS.toMillis(c.nanos() - killed)));
        }
        phase("kill of " + victim + " over");
        return new FailoverTimes.Kill(victim, down, leaders, sinceKill(led, killed, load), sinceKill(replicated, killed, load));
    }

    private static Map<String, Long> sinceKill(List<String> logs, long killed, ClusterAppends load) {
        Map<String, Long> out = new TreeMap<>();
        for (String log : logs) {
            out.put(log, TimeUnit.NANOSECONDS.toMillis(load.firstSentAfter(log, killed).orElseThrow().ackNanos() - killed));
        }
        return out;
    }

    /** A fourth server joins: Helix moves copies onto it, primaries among them, while the clients append. */
    private void joinFourthServer(List<String> logs, Set<String> running, ClusterAppends load) throws Exception {
        awaitSettled(logs, running);
        servers.get(JOINING).start();
        running.add(JOINING);
        waitUntil(60, () -> {
            JsonNode c = servers.cluster();
            return c != null && primariesOf(c).getOrDefault(JOINING, 0) > 0;
        });
        load.awaitEveryLogAcknowledgedAfter(System.nanoTime(), 30);
    }

    /**
     * Waits until every log is settled: led by its placed primary, with 2 copies on running servers, both in sync, no
     * move in flight.
     */
    private void awaitSettled(List<String> logs, Set<String> running) throws Exception {
        List<String> unsettled = new ArrayList<>();
        boolean settled = holdsWithin(90, () -> {
            JsonNode c = servers.cluster();
            unsettled.clear();
            for (String log : logs) {
                if (c == null || !settled(c.path("logs").path(log), running)) {
                    unsettled.add(log + (c == null ? "" : "=" + c.path("logs").path(log)));
                }
            }
            return unsettled.isEmpty();
        });
        assertThat(settled).as("logs not settled on %s after 90 s: %s", running, unsettled).isTrue();
    }

    private static boolean settled(JsonNode log, Set<String> running) {
        String primary = log.path("primary").asText(null);
        Set<String> copies = new HashSet<>(names(log.path("replicas")));
        copies.add(primary);
        return primary != null && primary.equals(log.path("leader").asText(null)) && copies.size() == 2
                && running.containsAll(copies) && new HashSet<>(names(log.path("in_sync"))).equals(copies)
                && log.path("moves").isEmpty();
    }

    private static List<String> names(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    private static Map<String, Integer> primariesOf(JsonNode cluster) {
        Map<String, Integer> out = new TreeMap<>();
        cluster.path("servers").forEach(s -> out.put(s.get("name").asText(), s.get("primaries").asInt()));
        return out;
    }

    /** No running server is primary of more than ⌈primaries / servers⌉ + 1 logs (WAGED balances them in time). */
    private void assertBalanced(Set<String> running) throws Exception {
        long bound = (LOGS + running.size() - 1) / running.size() + 1;
        AtomicReference<Map<String, Integer>> counts = new AtomicReference<>(Map.of());
        boolean balanced = holdsWithin(60, () -> {
            JsonNode c = servers.cluster();
            counts.set(c == null ? Map.of() : primariesOf(c));
            return c != null && counts.get().entrySet().stream()
                    .allMatch(e -> !running.contains(e.getKey()) || e.getValue() <= bound);
        });
        System.out.printf("ClusterKillLoopIT: primaries per server at the end %s (bound %d)%n", counts.get(), bound);
        assertThat(balanced).as("primaries per server %s, each at most %d", counts.get(), bound).isTrue();
    }

    /**
     * Every log's acknowledged records are at their LSNs on its primary, each once; one client per log, so its
     * acknowledged LSNs rise in the order of its appends. Returns each log's end (flushed) on its primary.
     */
    private Map<String, Long> assertEveryAcknowledgedRecordIsOnItsPrimary(List<String> logs, ClusterAppends load)
            throws Exception {
        JsonNode cluster = servers.cluster();
        Map<String, Long> ends = new LinkedHashMap<>();
        for (String log : logs) {
            ServerProcess primary = servers.get(cluster.path("logs").path(log).path("primary").asText()).process();
            Map<Long, String> records = primary.records("/v1/logs/" + log + "/records");
            List<ClusterAppends.Ack> acks = load.acks(log);
            assertThat(acks).as("appends acknowledged in %s", log).isNotEmpty();
            long previous = -1;
            for (ClusterAppends.Ack a : acks) {
                assertThat(a.lsn()).as("%s acknowledged by %s at %s after %s", a.payload(), a.server(), Lsn.format(a.lsn()),
                        Lsn.format(previous)).isGreaterThan(previous);
                assertThat(records.get(a.lsn())).as("%s acknowledged by %s at %s", a.payload(), a.server(),
                        Lsn.format(a.lsn())).isEqualTo(a.payload());
                previous = a.lsn();
            }
            assertThat(new HashSet<>(records.values())).as("records of %s, each payload once", log).hasSize(records.size());
            ends.put(log, Lsn.parse(JSON.readTree(primary.get("/v1/logs/" + log).body()).get("flushed_lsn").asText()));
        }
        return ends;
    }

    /**
     * Each replica holds the primary's end of its log, and once every server stopped, its segments are the primary's
     * byte for byte (a replica's records are not read over HTTP: a server redirects a read of a log it does not lead).
     */
    private void assertReplicasAreThePrimarysCopy(List<String> logs, Map<String, Long> ends) throws Exception {
        JsonNode cluster = servers.cluster();
        Map<String, String> primaries = new HashMap<>();
        Map<String, List<String>> replicas = new HashMap<>();
        for (String log : logs) {
            primaries.put(log, cluster.path("logs").path(log).path("primary").asText());
            replicas.put(log, names(cluster.path("logs").path(log).path("replicas")));
            for (String replica : replicas.get(log)) {
                ServerProcess copy = servers.get(replica).process();
                waitUntil(30, () -> Lsn.parse(JSON.readTree(copy.get("/v1/logs/" + log).body()).get("flushed_lsn").asText())
                        == ends.get(log));
            }
        }
        for (ClusterProcesses.Server s : servers.all()) {
            assertThat(s.terminate()).as("%s stopped cleanly", s.name).isTrue();
        }
        int compared = 0;
        for (String log : logs) {
            Path reference = servers.get(primaries.get(log)).data.resolve("logs").resolve(log);
            for (String replica : replicas.get(log)) {
                compared += WrittenSegments.assertIdentical(reference, servers.get(replica).data.resolve("logs").resolve(log),
                        ends.get(log));
            }
        }
        System.out.printf("ClusterKillLoopIT: every replica of the %d logs is its primary's copy (%d segments compared)%n",
                logs.size(), compared);
    }

    /** The failover times, where the soak's reader finds them (target/cluster-kill-loop/failover-times.txt). */
    private static void record(FailoverTimes times) throws Exception {
        Path dir = Files.createDirectories(Path.of("target", "cluster-kill-loop"));
        Files.writeString(dir.resolve("failover-times.txt"), String.format("%d logs of 2 copies, %d ms sessions, %d kills%n%s",
                LOGS, SESSION_MS, times.kills(), times.report()));
    }

    /** On a failure: the last lines of each server's output, and where everything was kept. */
    private void reportServers() {
        System.out.println("ClusterKillLoopIT failed: ZooKeeper's and the servers' files are kept in " + work);
        for (ClusterProcesses.Server s : servers.all()) {
            for (Path out : s.outputs()) {
                try {
                    List<String> lines = Files.readAllLines(out);
                    System.out.println("ClusterKillLoopIT: last lines of " + out);
                    lines.subList(Math.max(0, lines.size() - 30), lines.size()).forEach(l -> System.out.println("  " + l));
                } catch (Exception e) {
                    System.out.println("ClusterKillLoopIT: could not read " + out + ": " + e);
                }
            }
        }
    }
}
