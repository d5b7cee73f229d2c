package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Lsn;
import io.walden.core.TestLogs;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ship-before-flush across real processes (docs/replication.md, "Shipping before the flush"): a primary ships bytes
 * it has written but not forced, so a replica may hold what a crash of the primary's machine takes away. A power
 * loss is simulated after a SIGKILL by zeroing the primary's segment bytes from its flushed LSN on (what a page
 * cache that was never forced loses). Nothing acknowledged at a level that promised a replica may be lost, no
 * reader may have seen what was rewound, and every member must end with the same bytes without a manual step.
 */
@Isolated // runs alone, not beside another integration test class: it kills primaries under load and counts on their restarts
@Timeout(600)
class ShipBeforeFlushIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Forces only for ON commits: OFF records reach the primary's file (and the replica) but never its disk. */
    private static final String NEVER_FORCE_OFF = "3600000";

    @TempDir
    Path work;

    @Test
    void shouldRewindAReplicaPastWhatACrashedPrimaryNeverFlushedAndFollowItsNewEpoch() throws Exception {
        int replicationPort = ServerProcess.freePort();
        Path primaryDir = work.resolve("primary");
        Path replicaDir = work.resolve("replica");
        Map<Long, String> acknowledgedOn = new TreeMap<>();
        try (ServerProcess crashed = startPrimary(primaryDir, replicationPort);
             ServerProcess replica = ServerProcess.start(work, replicaDir, ServerProcess.freePort(),
                     "--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1")) {
            long primaryFlushed = crashAfterShippingAnUnflushedTail(crashed, replica, primaryDir, acknowledgedOn)[0];

            try (ServerProcess primary = startPrimary(primaryDir, replicationPort)) {
                JsonNode restarted = status(primary);
                assertThat(restarted.get("epoch").asInt()).as("a new epoch after the crash").isEqualTo(2);
                assertThat(lsn(restarted, "flushed_lsn")).as("recovered to what it had forced").isEqualTo(primaryFlushed);
                waitUntil(() -> status(replica).get("rewinds").asInt() >= 1 && status(replica).get("epoch").asInt() == 2);
                HttpResponse<String> after = primary.post("/v1/records?durability=on", "after the restart".getBytes());
                assertThat(after.statusCode()).as(after.body()).isEqualTo(200);
                acknowledgedOn.put(Lsn.parse(JSON.readTree(after.body()).get("lsn").asText()), "after the restart");

                waitUntil(() -> lsn(status(replica), "flushed_lsn") == lsn(status(primary), "flushed_lsn"));
                assertThat(replica.output()).contains("Rewound");
                assertThat(status(replica).hasNonNull("replication_error")).isFalse();
                Map<Long, String> onReplica = replica.records();
                assertThat(onReplica).as("every acknowledged ON record, nothing the primary never flushed")
                        .isEqualTo(primary.records()).isEqualTo(acknowledgedOn);
                long end = lsn(status(primary), "flushed_lsn");
                primary.terminate();
                replica.terminate();
                assertSameLog(end, primaryDir, replicaDir);
            }
        }
    }

    @Test
    void shouldPromoteAReplicaWithTheShippedTailAndLetTheCrashedPrimaryFollowIt() throws Exception {
        int replicationPort = ServerProcess.freePort();
        int promotedPort = ServerProcess.freePort();
        Path primaryDir = work.resolve("primary");
        Path replicaDir = work.resolve("replica");
        Map<Long, String> acknowledgedOn = new TreeMap<>();
        try (ServerProcess crashed = startPrimary(primaryDir, replicationPort);
             ServerProcess replica = ServerProcess.start(work, replicaDir, ServerProcess.freePort(),
                     "--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1",
                     "--replication-listen", "127.0.0.1:" + promotedPort)) {
            long written = crashAfterShippingAnUnflushedTail(crashed, replica, primaryDir, acknowledgedOn)[1];

            HttpResponse<String> promoted = replica.post("/admin/promote", new byte[0]);
            assertThat(promoted.statusCode()).as(promoted.body()).isEqualTo(200);
            Map<Long, String> kept = replica.records();
            assertThat(kept).as("the promoted replica keeps the shipped tail as its new epoch's prefix")
                    .containsAllEntriesOf(acknowledgedOn).hasSize(acknowledgedOn.size() + 20);
            assertThat(lsn(status(replica), "flushed_lsn")).isEqualTo(written);
            HttpResponse<String> after = replica.post("/v1/records?durability=local", "after promotion".getBytes());
            assertThat(after.statusCode()).isEqualTo(200);

            try (ServerProcess oldPrimary = ServerProcess.start(work, primaryDir, ServerProcess.freePort(),
                    "--replicate-from", "127.0.0.1:" + promotedPort, "--name", "old")) {
                waitUntil(() -> lsn(status(oldPrimary), "flushed_lsn") == lsn(status(replica), "flushed_lsn")
                        && status(oldPrimary).get("epoch").asInt() == 2);
                assertThat(status(oldPrimary).hasNonNull("replication_error")).isFalse();
                assertThat(oldPrimary.records()).as("no manual step: it follows and holds the same records")
                        .isEqualTo(replica.records()).containsValue("after promotion");
                long end = lsn(status(replica), "flushed_lsn");
                oldPrimary.terminate();
                replica.terminate();
                assertSameLog(end, primaryDir, replicaDir);
            }
        }
    }

    /**
     * Kills the primary of a three-member group again and again under synchronous load (SIGKILL, no warning), and at
     * random either restarts it (a new epoch at its recovered end) or promotes the most caught-up replica (the old
     * primary then rejoins as a replica, rewinding whatever it wrote beyond the switch point); the policy is
     * {@code FIRST 1} or {@code ANY 1} at random after each step. The iterations come from
     * {@code walden.killLoop.kills} (a few in the build, 30 in the soak profile); the seed is printed.
     */
    @Test
    void shouldLoseNoAcknowledgedRecordAcrossRepeatedPrimaryKillsRestartsAndPromotions() throws Exception {
        int kills = Integer.getInteger("walden.killLoop.kills", 4);
        List<Member> members = List.of(new Member("m0"), new Member("m1"), new Member("m2"));
        try {
            killLoop(kills, members);
        } finally {
            for (Member m : members) {
                if (m.process != null) {
                    m.process.close();
                }
            }
        }
    }

    private void killLoop(int kills, List<Member> members) throws Exception {
        long seed = Long.getLong("walden.killLoop.seed", System.nanoTime());
        System.out.println("ShipBeforeFlushIT kill loop: " + kills + " kills, -Dwalden.killLoop.seed=" + seed);
        Random random = new Random(seed);
        Member primary = members.get(0);
        primary.startPrimary();
        for (Member m : members.subList(1, 3)) {
            m.startReplicaOf(primary);
        }
        Load load = new Load(primary.http);
        try {
            load.start();
            for (int kill = 0; kill < kills; kill++) {
                int before = load.acknowledged.size();
                waitUntil(60, () -> load.acknowledged.size() > before + 20);
                TestLogs.pauseRandomly(random, 50, 500);
                primary.process.kill();
                // The first two kills try both ways; the others choose at random.
                if (kill == 0 || kill > 1 && random.nextBoolean()) {
                    primary.startPrimary(); // same directory and replication port: its replicas reconnect
                } else {
                    Member next = mostCaughtUpReplica(members, primary);
                    HttpResponse<String> promoted = next.process.post("/admin/promote", new byte[0]);
                    assertThat(promoted.statusCode()).as(promoted.body()).isEqualTo(200);
                    for (Member m : members) {
                        if (m != next) {
                            m.stop();
                            m.startReplicaOf(next);
                        }
                    }
                    primary = next;
                }
                String policy = (random.nextBoolean() ? "FIRST 1" : "ANY 1") + " (m0, m1, m2)";
                HttpResponse<String> set = primary.process.put("/admin/sync-replicas", policy);
                assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
                load.target(primary.http);
            }
            int before = load.acknowledged.size();
            waitUntil(60, () -> load.acknowledged.size() > before + 20);
        } finally {
            load.stop();
        }
        Member last = primary;
        Map<Long, String> onPrimary = last.process.records();
        for (Map.Entry<Long, String> acked : load.acknowledged.entrySet()) {
            assertThat(onPrimary.get(acked.getKey())).as("acknowledged ON record at %s", Lsn.format(acked.getKey()))
                    .isEqualTo(acked.getValue());
        }
        long end = lsn(status(last.process), "flushed_lsn");
        for (Member m : members) {
            waitUntil(60, () -> lsn(status(m.process), "flushed_lsn") == end);
            assertThat(status(m.process).hasNonNull("replication_error")).isFalse();
            assertThat(m.process.records()).as(m.name).isEqualTo(onPrimary);
        }
        for (Member m : members) {
            m.process.terminate();
        }
        assertSameLog(end, members.stream().map(m -> m.dir).toArray(Path[]::new));
        assertThat(load.acknowledged).as("the load made progress").hasSizeGreaterThan(20 * (kills + 1));
    }

    // ------------------------------------------------------------------ the scenario's steps

    private ServerProcess startPrimary(Path dir, int replicationPort) throws Exception {
        return ServerProcess.start(work, dir, ServerProcess.freePort(), "--replication-listen", "127.0.0.1:" + replicationPort,
                "--sync-replicas", "FIRST 1 (r1)", "--writer-delay-ms", NEVER_FORCE_OFF);
    }

    /**
     * 50 ON commits (acknowledged once both logs forced them), then 20 OFF records that the primary writes and ships
     * but never forces: the replica holds them, its readers do not see them, and the primary's flushed LSN stays put.
     */
    private static void shipUnflushedTail(ServerProcess primary, ServerProcess replica, Map<Long, String> acknowledgedOn)
            throws Exception {
        for (int i = 0; i < 50; i++) {
            String payload = "acknowledged " + i;
            HttpResponse<String> r = primary.post("/v1/records?durability=on", payload.getBytes(StandardCharsets.UTF_8));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            acknowledgedOn.put(Lsn.parse(JSON.readTree(r.body()).get("lsn").asText()), payload);
        }
        long flushed = lsn(status(primary), "flushed_lsn");
        for (int i = 0; i < 20; i++) {
            assertThat(primary.post("/v1/records?durability=off", ("never forced by the primary " + i).getBytes()).statusCode())
                    .isEqualTo(200);
        }
        waitUntil(() -> lsn(status(primary), "written_lsn") == lsn(status(primary), "insert_lsn"));
        long written = lsn(status(primary), "written_lsn");
        waitUntil(() -> lsn(status(replica), "flushed_lsn") == written);
        assertThat(lsn(status(primary), "flushed_lsn")).as("the primary forced none of the tail").isEqualTo(flushed);
        assertThat(lsn(status(replica), "read_limit_lsn")).isEqualTo(flushed);
    }

    /**
     * Ships an unflushed tail ({@link #shipUnflushedTail}), kills the primary with SIGKILL and takes from its files what
     * a power loss would: everything it had not forced.
     *
     * @return the primary's flushed and written LSNs at the kill
     */
    private static long[] crashAfterShippingAnUnflushedTail(ServerProcess primary, ServerProcess replica, Path primaryDir,
                                                            Map<Long, String> acknowledgedOn) throws Exception {
        waitUntil(() -> status(primary).get("replicas").size() == 1);
        shipUnflushedTail(primary, replica, acknowledgedOn);
        long flushed = lsn(status(primary), "flushed_lsn");
        long written = lsn(status(primary), "written_lsn");
        assertThat(replica.records()).as("the replica reads only what its primary flushed").isEqualTo(acknowledgedOn);
        primary.kill();
        powerLoss(primaryDir, flushed, written);
        return new long[] {flushed, written};
    }

    /** What a machine that lost power after the SIGKILL keeps: nothing the primary did not force. */
    private static void powerLoss(Path dir, long flushed, long written) throws IOException {
        assertThat(written).isGreaterThan(flushed);
        Path segment = segmentHolding(dir, flushed);
        long start = Long.parseLong(segment.getFileName().toString().substring(0, 16), 16);
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            assertThat(written - start).as("the lost tail lies in one segment").isLessThanOrEqualTo(ch.size());
            ch.write(ByteBuffer.allocate((int) (written - flushed)), flushed - start);
            ch.force(false);
        }
    }

    private Member mostCaughtUpReplica(List<Member> members, Member dead) throws Exception {
        // The replicas' own flushed LSNs, once they stopped moving: they force what they received before the kill.
        Map<Member, Long> flushed = new HashMap<>();
        long[] movedAt = {System.nanoTime()};
        waitUntil(() -> {
            for (Member m : members) {
                if (m != dead) {
                    long f = lsn(status(m.process), "flushed_lsn");
                    if (!Long.valueOf(f).equals(flushed.put(m, f))) {
                        movedAt[0] = System.nanoTime();
                    }
                }
            }
            return System.nanoTime() - movedAt[0] >= TimeUnit.MILLISECONDS.toNanos(200); // still for 200 ms
        });
        return flushed.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
    }

    // ------------------------------------------------------------------ checks

    static JsonNode status(ServerProcess server) throws IOException, InterruptedException {
        return JSON.readTree(server.get("/admin/status").body());
    }

    static long lsn(JsonNode status, String field) {
        return Lsn.parse(status.get(field).asText());
    }

    private static Path segmentHolding(Path dir, long lsn) throws IOException {
        Path holder = null;
        for (Path p : segments(dir)) {
            if (Long.parseLong(p.getFileName().toString().substring(0, 16), 16) <= lsn) {
                holder = p;
            }
        }
        assertThat(holder).as("a segment holding %s in %s", Lsn.format(lsn), dir).isNotNull();
        return holder;
    }

    private static List<Path> segments(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".wal")).sorted().toList();
        }
    }

    /** The logs' bytes below {@code end} are identical in every directory (segment headers included). */
    private static void assertSameLog(long end, Path... dirs) throws IOException {
        for (Path segment : segments(dirs[0])) {
            long start = Long.parseLong(segment.getFileName().toString().substring(0, 16), 16);
            if (start >= end) {
                continue;
            }
            byte[] expected = Files.readAllBytes(segment);
            int length = (int) Math.min(expected.length, end - start);
            for (Path other : Arrays.copyOfRange(dirs, 1, dirs.length)) {
                byte[] actual = Files.readAllBytes(other.resolve(segment.getFileName()));
                assertThat(Arrays.equals(expected, 0, length, actual, 0, length))
                        .as("%s identical below %s in %s", segment.getFileName(), Lsn.format(end), other).isTrue();
            }
        }
    }

    // ------------------------------------------------------------------ the kill loop's parts

    /** A member of the group: its directory and replication port stay; its HTTP port is new on every start. */
    private final class Member {
        final String name;
        final Path dir;
        final int replicationPort;
        volatile int http;
        ServerProcess process;

        Member(String name) throws IOException {
            this.name = name;
            this.dir = work.resolve(name);
            this.replicationPort = ServerProcess.freePort();
        }

        void startPrimary() throws Exception {
            start();
        }

        void startReplicaOf(Member primary) throws Exception {
            start("--replicate-from", "127.0.0.1:" + primary.replicationPort);
        }

        private void start(String... extra) throws Exception {
            http = ServerProcess.freePort(); // a killed server's port may linger in TIME_WAIT
            List<String> args = new ArrayList<>(List.of("--name", name, "--replication-listen", "127.0.0.1:" + replicationPort,
                    "--sync-replicas", "ANY 1 (m0, m1, m2)", "--remote-commit-timeout-ms", "60000"));
            args.addAll(List.of(extra));
            process = ServerProcess.start(work, dir, http, args.toArray(String[]::new));
        }

        void stop() throws InterruptedException {
            if (process.isAlive()) {
                process.kill();
            }
        }
    }

    /** ON appends from three threads against whichever member is primary; only a 200 counts as acknowledged. */
    private static final class Load {
        final Map<Long, String> acknowledged = new ConcurrentHashMap<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicInteger sequence = new AtomicInteger();
        private final List<Thread> threads = new ArrayList<>();
        private final HttpClient http = ContractCheckedClient.wrap(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build());
        private volatile int port;

        Load(int port) {
            this.port = port;
        }

        void target(int port) {
            this.port = port;
        }

        void start() {
            for (int t = 0; t < 3; t++) {
                Thread thread = new Thread(this::run, "load-" + t);
                thread.setDaemon(true);
                threads.add(thread);
                thread.start();
            }
        }

        private void run() {
            while (running.get()) {
                String payload = "on " + sequence.incrementAndGet();
                try {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                                    + "/v1/records?durability=on")).timeout(Duration.ofSeconds(90))
                            .POST(HttpRequest.BodyPublishers.ofString(payload)).build(), HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() == 200) {
                        acknowledged.put(Lsn.parse(JSON.readTree(r.body()).get("lsn").asText()), payload);
                    } else {
                        sleepQuietly(); // refused (e.g. a replica's 503, a commit timeout): not acknowledged
                    }
                } catch (IOException e) {
                    sleepQuietly(); // the primary is down or was just killed
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        /** A sleep: the load's pace after a refusal or a lost connection (not a wait on a condition). */
        private static void sleepQuietly() {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        void stop() throws InterruptedException {
            running.set(false);
            for (Thread t : threads) {
                t.join(120_000);
            }
        }
    }
}
