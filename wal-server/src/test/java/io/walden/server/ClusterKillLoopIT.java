package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
 * {@code target/cluster-kill-loop/failover-times.txt}. The servers' output and every acknowledgement are kept in
 * {@code target/cluster-kill-loop/logs/}; their data too, in the temporary directory, when the test fails (its path is
 * printed).
 */
@Isolated // runs alone: its failovers run on ZooKeeper session timeouts of a few seconds, on two cores
class ClusterKillLoopIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int LOGS = Integer.getInteger("walden.cluster.logs", 12);
    private static final int KILLS = Integer.getInteger("walden.cluster.kills", 3);
    private static final long LOOP_SECONDS = Long.getLong("walden.cluster.loopSeconds", 0);
    /** A fourth server joins and is drained after every this many kills (0: once, after the last). */
    private static final int JOIN_EVERY = Integer.getInteger("walden.cluster.joinEvery", 0);
    /** The session timeout the servers ask for; ZooKeeper grants 2 to 20 of its ticks. */
    private static final int SESSION_MS = Integer.getInteger("walden.cluster.sessionMs", 3000);
    /** ZooKeeper's tick: 300 ms (it expires sessions to within a tick), longer only if the session asked needs it. */
    private static final int TICK_MS = Math.max(300, (SESSION_MS + 19) / 20);
    private static final List<String> FIRST_THREE = List.of("a", "b", "c");
    private static final String JOINING = "d";
    /** Where the figures and the servers' output are kept (the module's target directory). */
    private static final Path KEPT = Path.of("target", "cluster-kill-loop");
    /** The longest a planned hand-over waits for a replica with the log's appends paused (PlacedLogs.stepDown). */
    private static final long HANDOVER_MILLIS = 10_000;

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
    private ClusterChecks checks;
    private final long started = System.nanoTime();

    @BeforeEach
    void startZooKeeper() throws Exception {
        zk = new TestingServer(new InstanceSpec(work.resolve("zk").toFile(), -1, -1, -1, false, 1, TICK_MS, 100), true);
        servers = new ClusterProcesses(work, zk.getConnectString(), SESSION_MS);
        checks = new ClusterChecks(servers);
    }

    @AfterEach
    void stopAll() throws Exception {
        servers.close();
        zk.close();
        keepOutputs();
    }

    /**
     * The servers' output and the acknowledgements outlive the temporary directory, in
     * {@code target/cluster-kill-loop/logs/}: a failover time far from the others is understood from them.
     */
    private void keepOutputs() throws Exception {
        Path kept = Files.createDirectories(KEPT.resolve("logs"));
        try (var old = Files.list(kept)) {
            for (Path file : old.toList()) {
                Files.delete(file); // an earlier run's
            }
        }
        for (ClusterProcesses.Server s : servers.all()) {
            List<Path> outputs = s.outputs();
            for (int i = 0; i < outputs.size(); i++) {
                Files.copy(outputs.get(i), kept.resolve(s.name + "-" + i + ".log"));
            }
        }
        if (Files.exists(work.resolve("acks.tsv"))) {
            Files.copy(work.resolve("acks.tsv"), kept.resolve("acks.tsv"));
        }
    }

    @Test
    void keepsEveryAcknowledgedRecordWithOneLeaderPerEpochThroughKillsAndAJoiningServer() throws Exception {
        long seed = Long.getLong("walden.cluster.seed", System.nanoTime());
        System.out.printf("ClusterKillLoopIT: %d logs of 2 copies, at least %d kills over at least %d s, a server joining "
                + "and drained %s, %d ms sessions, seed %d (-Dwalden.cluster.seed=%d repeats the choices)%n", LOGS, KILLS,
                LOOP_SECONDS, JOIN_EVERY == 0 ? "at the end" : "every " + JOIN_EVERY + " kills and at the end", SESSION_MS,
                seed, seed);
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
        checks.awaitSettled(logs, running);
        phase("logs settled");
        FailoverTimes times = new FailoverTimes();
        long began = System.nanoTime();
        try (ClusterAppends load = new ClusterAppends(logs, servers, 20);
             LeadershipWatch watch = new LeadershipWatch(servers)) {
            try {
                load.awaitEveryLogAcknowledgedAfter(began, 30);
                while (times.kills() < KILLS || System.nanoTime() - began < TimeUnit.SECONDS.toNanos(LOOP_SECONDS)) {
                    String victim = FIRST_THREE.get(random.nextInt(FIRST_THREE.size()));
                    boolean quick = times.kills() % 2 == 1; // every other kill, the second, the fourth...
                    times.add(killAndRestart(victim, quick, random, logs, running, load, watch));
                    if (JOIN_EVERY > 0 && times.kills() % JOIN_EVERY == 0) {
                        times.add(joinAndDrain(logs, running, load, times.longestFailover()));
                    }
                }
                times.add(joinAndDrain(logs, running, load, times.longestFailover()));
                phase("fourth server joined and drained");
                checks.awaitSettled(logs, running);
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
            assertThat(load.refusals()).as("no server ever said a log of the cluster does not exist (between two "
                    + "primaries: 503 no_primary)").doesNotContainKey("404 log_not_found");
            checks.assertBalanced(logs.size(), running);
            phase("balanced");
            Map<String, Long> ends = checks.assertEveryAcknowledgedRecordIsOnItsPrimary(logs, load);
            phase("records checked on the primaries");
            checks.assertReplicasAreThePrimarysCopy(logs, ends);
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
     * Kills {@code victim} with SIGKILL, starts it again, and waits until every log takes appends again; returns what
     * the kill cost the logs it held. A quick restart comes within a session timeout of the kill (the server may find
     * its old session still there, and clients that reach it while it joins wait until it serves); otherwise the server
     * comes back once every log took appends again without it, and the times are the failover's alone.
     */
    private FailoverTimes.Kill killAndRestart(String victim, boolean quickRestart, Random random, List<String> logs,
                                              Set<String> running, ClusterAppends load, LeadershipWatch watch)
            throws Exception {
        checks.awaitSettled(logs, running);
        JsonNode before = servers.cluster();
        List<String> led = new ArrayList<>();
        List<String> replicated = new ArrayList<>();
        for (String log : logs) {
            JsonNode l = before.path("logs").path(log);
            if (victim.equals(l.path("leader").asText())) {
                led.add(log);
            } else if (ClusterChecks.names(l.path("replicas")).contains(victim)) {
                replicated.add(log);
            }
        }
        long killed = servers.get(victim).kill();
        running.remove(victim);
        if (quickRestart) {
            Thread.sleep(random.nextInt(SESSION_MS + 1)); // the time it stays down, chosen: not a wait for a condition
        } else {
            load.awaitEveryLogAcknowledgedAfter(killed, 90);
        }
        long down = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        servers.get(victim).start();
        running.add(victim);
        load.awaitEveryLogAcknowledgedAfter(killed, 90);
        Map<String, Long> leaders = new TreeMap<>();
        for (String log : led) {
            watch.firstChangeAfter(log, killed)
                    .ifPresent(c -> leaders.put(log, TimeUnit.NANOSECONDS.toMillis(c.nanos() - killed)));
        }
        phase("kill of " + victim + " over");
        return new FailoverTimes.Kill(victim, quickRestart, down, leaders, sinceKill(led, killed, load),
                sinceKill(replicated, killed, load));
    }

    private static Map<String, Long> sinceKill(List<String> logs, long killed, ClusterAppends load) {
        Map<String, Long> out = new TreeMap<>();
        for (String log : logs) {
            out.put(log, TimeUnit.NANOSECONDS.toMillis(load.firstSentAfter(log, killed).orElseThrow().ackNanos() - killed));
        }
        return out;
    }

    /**
     * A fourth server joins (a drained one is told to take logs again first): Helix moves copies onto it, a primary
     * among them, while the clients append; then it is drained ({@code POST /admin/drain}, then {@code GET} until it
     * holds nothing) and stopped, as an operator takes a server down. No log waits longer than one failover
     * ({@code failover}, the longest of the run so far) or a planned hand-over's wait, whichever is longer (issue #38).
     */
    private FailoverTimes.Join joinAndDrain(List<String> logs, Set<String> running, ClusterAppends load, long failover)
            throws Exception {
        checks.awaitSettled(logs, running);
        ClusterProcesses.Server d = servers.get(JOINING);
        d.start();
        long joined = System.nanoTime();
        running.add(JOINING);
        if (JSON.readTree(d.process().get("/admin/drain").body()).get("draining").asBoolean()) {
            HttpResponse<String> ended = d.process().send("DELETE", "/admin/drain");
            assertThat(ended.statusCode()).as(ended.body()).isEqualTo(200);
        }
        waitUntil(60, () -> {
            JsonNode c = servers.cluster();
            return c != null && ClusterChecks.primariesOf(c).getOrDefault(JOINING, 0) > 0;
        });
        long led = System.nanoTime();
        HttpResponse<String> drain = d.process().post("/admin/drain", new byte[0]);
        assertThat(drain.statusCode()).as(drain.body()).isIn(200, 202);
        JsonNode asked = JSON.readTree(drain.body());
        assertThat(asked.get("server").asText()).isEqualTo(JOINING);
        assertThat(asked.get("draining").asBoolean()).isTrue();
        JsonNode[] last = {asked};
        boolean done = holdsWithin(90, () -> {
            HttpResponse<String> r = d.process().get("/admin/drain");
            last[0] = JSON.readTree(r.body());
            return r.statusCode() == 200;
        });
        assertThat(done).as("%s drained within 90 s; its last answer %s; the cluster %s", JOINING, last[0],
                servers.cluster()).isTrue();
        long drained = System.nanoTime();
        assertThat(last[0].get("logs").asInt()).as(last[0].toString()).isZero();
        assertThat(last[0].get("done").asBoolean()).as(last[0].toString()).isTrue();
        // Every server's view of the placements trails the drained server's own by up to a refresh.
        List<String> onIt = new ArrayList<>();
        boolean gone = holdsWithin(30, () -> {
            JsonNode c = servers.cluster();
            onIt.clear();
            for (String log : logs) {
                JsonNode l = c == null ? null : c.path("logs").path(log);
                if (l == null || JOINING.equals(l.path("primary").asText())
                        || ClusterChecks.names(l.path("replicas")).contains(JOINING)) {
                    onIt.add(log + "=" + l);
                }
            }
            return onIt.isEmpty();
        });
        assertThat(gone).as("logs still placed on %s after its drain: %s", JOINING, onIt).isTrue();
        assertThat(d.terminate()).as("the drained server stopped cleanly").isTrue();
        long stopped = System.nanoTime();
        running.remove(JOINING);
        load.awaitEveryLogAcknowledgedAfter(stopped, 30); // a log still waiting for it shows in the longest wait
        long longest = load.longestWait(joined, System.nanoTime());
        assertThat(longest).as("the longest wait of a log's appends while a server joined and drained (ms), against "
                + "the longest failover of this run's kills").isLessThanOrEqualTo(Math.max(failover, HANDOVER_MILLIS));
        return new FailoverTimes.Join(TimeUnit.NANOSECONDS.toMillis(led - joined), asked.get("logs").asInt(),
                TimeUnit.NANOSECONDS.toMillis(drained - led), longest);
    }

    /** The failover times, where the soak's reader finds them (target/cluster-kill-loop/failover-times.txt). */
    private static void record(FailoverTimes times) throws Exception {
        Path dir = Files.createDirectories(KEPT);
        Files.writeString(dir.resolve("failover-times.txt"), String.format("%d logs of 2 copies, %d ms sessions, %d kills, "
                + "recorded %s%n%s", LOGS, SESSION_MS, times.kills(), java.time.Instant.now(), times.report()));
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
