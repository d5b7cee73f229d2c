package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Eventually;
import io.walden.core.Lsn;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * I/O fault injection against the real server process (mvn -B verify -Pfaults; needs Debian's fiu-utils). A primary
 * runs under {@code fiu-run -x} with a synchronous replica beside it; clients append at one durability level; then
 * libfiu makes the primary's fdatasync, fsync, pwrite or rename fail at random with EIO or ENOSPC. Nothing is
 * killed. Whatever failed: the server answers appends with 503 once its log has failed, says why in /admin/status,
 * keeps serving reads, and after a restart without faults every acknowledged record is there, byte for byte, and
 * no record holds anything a client did not send. The fault points and what Walden does are listed in
 * docs/durability.md.
 */
@Timeout(1800)
class FaultInjectionFT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * libfiu's names for the calls Walden's file I/O makes (fiu-utils' function_list); write() is left alone: sockets
     * use it. -Dwalden.faults.points=a,b narrows the choice (the first is the first round's).
     */
    private static final String[] FAULT_POINTS = System.getProperty("walden.faults.points",
            "posix/io/sync/fdatasync,posix/io/sync/fsync,posix/io/rw/pwrite,posix/io/dir/rename").split(",");
    private static final int EIO = 5;
    private static final int ENOSPC = 28;
    private static final int ROUNDS = Integer.getInteger("walden.faults.rounds", 3);
    private static final long SEED = Long.getLong("walden.faults.seed", System.nanoTime());

    @TempDir
    Path work;

    @BeforeAll
    static void requireFiu() {
        assertThat(Path.of("/usr/bin/fiu-run")).as("fault injection needs Debian's fiu-utils: apt-get install fiu-utils")
                .exists();
        System.out.println("fault injection seed " + SEED + " (-Dwalden.faults.seed to repeat)");
    }

    @ParameterizedTest(name = "durability {0}")
    @ValueSource(strings = {"off", "local", "on", "remote_write", "remote_apply"})
    void noAcknowledgedRecordIsLostAndNoneIsForgedWhenTheDiskFailsUnderLoad(String durability) throws Exception {
        Random random = new Random(SEED ^ durability.hashCode());
        for (int round = 0; round < ROUNDS; round++) {
            // The first round fails the call every durable append waits on; the others pick any fault point.
            String point = round == 0 ? FAULT_POINTS[0] : FAULT_POINTS[random.nextInt(FAULT_POINTS.length)];
            int errno = random.nextBoolean() ? EIO : ENOSPC;
            double probability = new double[] {0.01, 0.1, 0.5}[random.nextInt(3)];
            runRound(work.resolve(durability + "-" + round), durability, point, errno, probability);
        }
    }

    private void runRound(Path dir, String durability, String point, int errno, double probability) throws Exception {
        Files.createDirectories(dir);
        int replicationPort = ServerProcess.freePort();
        HttpClient http = ContractCheckedClient.wrap(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build());
        Map<Long, String> acknowledged = new ConcurrentSkipListMap<>();
        Set<String> sent = ConcurrentHashMap.newKeySet();
        Map<String, AtomicInteger> refusals = new ConcurrentHashMap<>();
        String outcome;
        try (ServerProcess primary = ServerProcess.startUnder(List.of("/usr/bin/fiu-run", "-x"), dir, dir.resolve("primary"),
                ServerProcess.freePort(), "http", http, "--replication-listen", "127.0.0.1:" + replicationPort,
                "--sync-replicas", "FIRST 1 (r1)", "--remote-commit-timeout-ms", "20000", "--segment-size", Integer.toString(1 << 20));
             ServerProcess replica = ServerProcess.start(dir, dir.resolve("replica"), ServerProcess.freePort(),
                     "--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1")) {
            waitUntil(() -> JSON.readTree(primary.get("/admin/status").body()).get("replicas").size() == 1);

            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> clients = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                int client = c;
                Thread t = new Thread(() -> {
                    for (int i = 0; !stop.get(); i++) {
                        String payload = "client " + client + " record " + i + " " + "x".repeat(i % 300);
                        sent.add(payload);
                        try {
                            HttpResponse<String> r = primary.post("/v1/records?durability=" + durability,
                                    payload.getBytes(StandardCharsets.UTF_8));
                            JsonNode body = JSON.readTree(r.body());
                            if (r.statusCode() == 200) {
                                acknowledged.put(Lsn.parse(body.get("lsn").asText()), payload);
                            } else {
                                assertThat(r.statusCode()).as("refused with %s", r.body()).isEqualTo(503);
                                refusals.computeIfAbsent(body.get("error").asText(), k -> new AtomicInteger()).incrementAndGet();
                                Thread.sleep(20); // a sleep: a client's pace after a refusal
                            }
                        } catch (IOException e) {
                            refusals.computeIfAbsent("io: " + e.getClass().getSimpleName(), k -> new AtomicInteger()).incrementAndGet();
                        } catch (InterruptedException e) {
                            return;
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    }
                }, "client-" + c);
                t.start();
                clients.add(t);
            }
            waitUntil(() -> acknowledged.size() >= 20); // appends under way
            int before = acknowledged.size();
            fiuCtrl(primary.pid(), "enable_random name=" + point + ",probability=" + probability + ",failinfo=" + errno);
            if (Eventually.holdsWithin(8, () -> failed(primary))) {
                waitUntil(() -> !refusals.isEmpty()); // appends after the failure are refused
            }
            stop.set(true);
            for (Thread t : clients) {
                t.join(60_000);
                assertThat(t.isAlive()).as("a client still waits for an answer a minute after the failure").isFalse();
            }
            fiuCtrl(primary.pid(), "disable name=" + point);

            JsonNode status = JSON.readTree(primary.get("/admin/status").body());
            boolean logFailed = status.get("failed").asBoolean();
            if (logFailed) {
                assertThat(refusals).as("appends after the failure are refused").isNotEmpty();
                HttpResponse<String> append = primary.post("/v1/records?durability=" + durability, "after".getBytes());
                assertThat(append.statusCode()).isEqualTo(503);
                assertThat(append.body()).contains("log_failed");
            }
            HttpResponse<String> read = primary.get("/v1/records?limit=10");
            assertThat(read.statusCode()).as("reads are served after the failure: %s", read.body()).isEqualTo(200);
            outcome = String.format("%s %s errno %d p=%.2f: %d acknowledged (%d before the faults), refusals %s, log %s%s",
                    durability, point, errno, probability, acknowledged.size(), before, refusals,
                    logFailed ? "failed: " : "still ready", logFailed ? failureReason(primary) : "");
            primary.terminate();
        }
        System.out.println(outcome);

        try (ServerProcess reopened = ServerProcess.start(dir, dir.resolve("primary"), ServerProcess.freePort())) {
            Map<Long, String> records = reopened.records();
            for (Map.Entry<Long, String> r : records.entrySet()) {
                assertThat(sent).as("record at %s holds what a client sent", Lsn.format(r.getKey()))
                        .contains(r.getValue());
            }
            if (!durability.equals("off")) {
                for (Map.Entry<Long, String> a : acknowledged.entrySet()) {
                    assertThat(records.get(a.getKey())).as("acknowledged record at %s (%s)",
                            Lsn.format(a.getKey()), outcome).isEqualTo(a.getValue());
                }
            }
        }
    }

    private static boolean failed(ServerProcess server) throws Exception {
        return JSON.readTree(server.get("/admin/status").body()).get("failed").asBoolean();
    }

    private static String failureReason(ServerProcess server) throws Exception {
        JsonNode status = JSON.readTree(server.get("/admin/status").body());
        JsonNode reason = status.get("failure");
        return reason == null ? status.toString() : reason.asText();
    }

    private static void fiuCtrl(long pid, String command) throws Exception {
        Process p = new ProcessBuilder("/usr/bin/fiu-ctrl", "-c", command, Long.toString(pid)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("fiu-ctrl %s: %s", command, out).isZero();
    }


}
