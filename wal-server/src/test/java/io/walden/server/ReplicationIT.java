package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.luben.zstd.Zstd;
import io.walden.core.Lsn;
import io.walden.core.WrittenSegments;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/** Primary and replica as two processes of the real jar; the primary is killed with SIGKILL. */
class ReplicationIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;

    @Test
    void shouldHaveEveryOnAcknowledgedRecordOnTheSynchronousReplicaAfterThePrimaryIsKilledAndPromoteIt() throws Exception {
        int replicationPort = ServerProcess.freePort();
        int replicaReplicationPort = ServerProcess.freePort();
        List<String> acknowledged = new ArrayList<>();
        try (ServerProcess primary = ServerProcess.start(work, work.resolve("primary"), ServerProcess.freePort(),
                "--replication-listen", "127.0.0.1:" + replicationPort, "--sync-replicas", "FIRST 1 (r1)");
             ServerProcess replica = ServerProcess.start(work, work.resolve("replica"), ServerProcess.freePort(),
                     "--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1",
                     "--replication-listen", "127.0.0.1:" + replicaReplicationPort)) {
            // sync once it caught up with what it lacked at its connection (PostgreSQL's streaming), potential before
            waitUntil(() -> JSON.readTree(primary.get("/admin/status").body()).at("/replicas/0/sync_state").asText()
                    .equals("sync"));
            JsonNode status = JSON.readTree(primary.get("/admin/status").body());
            assertThat(status.at("/replicas/0/name").asText()).isEqualTo("r1");
            assertThat(status.get("sync_replicas").asText()).isEqualTo("FIRST 1 (r1)");
            primary.post("/v1/records?durability=on", "warm".getBytes());
            JsonNode afterOne = JSON.readTree(primary.get("/admin/status").body());
            assertThat(afterOne.at("/replicas/0/flush_lag_ms").isNumber()).as(afterOne.toString()).isTrue();
            String metrics = primary.get("/metrics").body();
            assertThat(metrics).contains("walden_replica_lsn{log=\"default\",position=\"flush\",replica=\"r1\"}")
                    .contains("walden_replica_lag_seconds_count{position=\"flush\",replica=\"r1\"}");
            acknowledged.add(JSON.readTree(primary.get("/v1/records?from=0/0").body()).at("/records/0/lsn").asText());

            for (int i = 1; i < 100; i++) {
                HttpResponse<String> r = primary.post("/v1/records?durability=on", ("record " + i).getBytes(StandardCharsets.UTF_8));
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                acknowledged.add(JSON.readTree(r.body()).get("lsn").asText());
            }
            primary.kill();

            Map<String, String> onReplica = new HashMap<>();
            JsonNode page = JSON.readTree(replica.get("/v1/records?from=0/0&limit=1000").body());
            for (JsonNode rec : page.get("records")) {
                onReplica.put(rec.get("lsn").asText(), new String(Base64.getDecoder().decode(rec.get("data").asText()), StandardCharsets.UTF_8));
            }
            assertThat(onReplica.get(acknowledged.get(0))).isEqualTo("warm");
            for (int i = 1; i < acknowledged.size(); i++) {
                assertThat(onReplica.get(acknowledged.get(i))).as("record %d on the replica", i).isEqualTo("record " + i);
            }
            JsonNode replicaStatus = JSON.readTree(replica.get("/admin/status").body());
            assertThat(replicaStatus.get("role").asText()).isEqualTo("replica");
            assertThat(replicaStatus.get("primary").asText()).isEqualTo("127.0.0.1:" + replicationPort);

            HttpResponse<String> refused = replica.post("/v1/records", "no".getBytes());
            assertThat(refused.statusCode()).isEqualTo(409);
            assertThat(refused.body()).contains("replica of the primary at 127.0.0.1:" + replicationPort)
                    .contains("its replication address");
            HttpResponse<String> notPrimary = replica.put("/admin/sync-replicas", "FIRST 1 (x)");
            assertThat(notPrimary.statusCode()).isEqualTo(409);
            assertThat(Lsn.parse(replicaStatus.get("flushed_lsn").asText()))
                    .isGreaterThan(Lsn.parse(acknowledged.get(acknowledged.size() - 1)));

            HttpResponse<String> promoted = replica.post("/admin/promote", new byte[0]);
            assertThat(promoted.statusCode()).as(promoted.body()).isEqualTo(200);
            assertThat(JSON.readTree(promoted.body()).get("epoch").asInt()).isEqualTo(2);
            HttpResponse<String> accepted = replica.post("/v1/records?durability=local", "after promotion".getBytes());
            assertThat(accepted.statusCode()).as(accepted.body()).isEqualTo(200);
            JsonNode after = JSON.readTree(replica.get("/admin/status").body());
            assertThat(after.get("role").asText()).isEqualTo("primary");
            assertThat(after.get("epoch").asInt()).isEqualTo(2);
            assertThat(after.at("/history/1/start_lsn").asText()).isEqualTo(JSON.readTree(promoted.body()).get("epoch_start_lsn").asText());
            assertThat(replica.post("/admin/promote", new byte[0]).statusCode()).as("promoting a primary").isEqualTo(409);

            // The old primary stopped where the replica did: restarted as a replica of the new primary, it follows.
            try (ServerProcess rejoined = ServerProcess.start(work, work.resolve("primary"), ServerProcess.freePort(),
                    "--replicate-from", "127.0.0.1:" + replicaReplicationPort, "--name", "old")) {
                waitUntil(() -> JSON.readTree(rejoined.get("/admin/status").body()).get("epoch").asInt() == 2);
                String lsn = JSON.readTree(accepted.body()).get("lsn").asText();
                waitUntil(() -> rejoined.get("/v1/records?from=" + lsn).body().contains(
                        Base64.getEncoder().encodeToString("after promotion".getBytes(StandardCharsets.UTF_8))));
            }
        }
    }

    @Test
    void shouldRewindAnOldPrimaryThatWentOnAloneAndFollowThePromotedOneWithNoManualStep() throws Exception {
        int replicationPort = ServerProcess.freePort();
        int promotedPort = ServerProcess.freePort();
        Path replicaDir = work.resolve("replica");
        String alone = "only the old primary has this";
        try (ServerProcess primary = ServerProcess.start(work, work.resolve("primary"), ServerProcess.freePort(),
                "--replication-listen", "127.0.0.1:" + replicationPort, "--sync-replicas", "FIRST 1 (r1)")) {
            try (ServerProcess replica = ServerProcess.start(work, replicaDir, ServerProcess.freePort(),
                    "--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1")) {
                for (int i = 0; i < 20; i++) {
                    assertThat(primary.post("/v1/records?durability=on", ("shared " + i).getBytes()).statusCode()).isEqualTo(200);
                }
                replica.kill();
            }
            primary.put("/admin/sync-replicas", "");
            // LOCAL promises this machine only: a failover to the replica may drop it, as it does here.
            assertThat(primary.post("/v1/records?durability=local", alone.getBytes()).statusCode()).isEqualTo(200);
            primary.kill();
        }
        try (ServerProcess promoted = ServerProcess.start(work, replicaDir, ServerProcess.freePort(),
                "--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1", "--replication-listen", "127.0.0.1:" + promotedPort)) {
            assertThat(promoted.post("/admin/promote", new byte[0]).statusCode()).isEqualTo(200);
            HttpResponse<String> after = promoted.post("/v1/records?durability=local", "after promotion".getBytes());
            try (ServerProcess oldPrimary = ServerProcess.start(work, work.resolve("primary"), ServerProcess.freePort(),
                    "--replicate-from", "127.0.0.1:" + promotedPort, "--name", "old")) {
                String end = JSON.readTree(promoted.get("/admin/status").body()).get("flushed_lsn").asText();
                waitUntil(() -> JSON.readTree(oldPrimary.get("/admin/status").body()).get("flushed_lsn").asText().equals(end)
                        && JSON.readTree(oldPrimary.get("/admin/status").body()).get("epoch").asInt() == 2);
                JsonNode status = JSON.readTree(oldPrimary.get("/admin/status").body());
                assertThat(status.get("replication_error").isNull()).as(status.toString()).isTrue();
                Map<Long, String> onOld = oldPrimary.records();
                assertThat(onOld).as("rewound past the switch point, then followed").isEqualTo(promoted.records())
                        .doesNotContainValue(alone).containsValue("after promotion").hasSize(21);
                assertThat(onOld.get(Lsn.parse(JSON.readTree(after.body()).get("lsn").asText()))).isEqualTo("after promotion");
                assertThat(oldPrimary.output()).contains("Rewound");
                assertThat(JSON.readTree(promoted.get("/admin/status").body()).get("replicas").size()).isEqualTo(1);
            }
        }
    }

    @Test
    void shouldResumeAReplicaKilledMidStreamWithNoGapOrDuplicateAndByteIdenticalSegments() throws Exception {
        int replicationPort = ServerProcess.freePort();
        int replicaHttp = ServerProcess.freePort();
        Path replicaDir = work.resolve("replica");
        String[] replicaArgs = {"--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1", "--segment-size", "65536"};
        long written;
        try (ServerProcess primary = ServerProcess.start(work, work.resolve("primary"), ServerProcess.freePort(),
                "--replication-listen", "127.0.0.1:" + replicationPort, "--segment-size", "65536")) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger sent = new AtomicInteger();
            List<Throwable> errors = new CopyOnWriteArrayList<>();
            Thread load = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        byte[] body = ("record " + sent.get() + " " + "x".repeat(sent.get() % 900)).getBytes(StandardCharsets.UTF_8);
                        HttpResponse<String> r = primary.post("/v1/records?durability=local", body);
                        if (r.statusCode() != 200) {
                            throw new AssertionError(r.body());
                        }
                        sent.incrementAndGet();
                    }
                } catch (Throwable t) {
                    errors.add(t);
                }
            });
            load.start();
            try (ServerProcess replica = ServerProcess.start(work, replicaDir, replicaHttp, replicaArgs)) {
                waitUntil(() -> Lsn.parse(JSON.readTree(replica.get("/admin/status").body()).get("flushed_lsn").asText()) > 300_000);
                replica.kill(); // mid-stream: the primary keeps appending
            }
            int atKill = sent.get();
            waitUntil(() -> sent.get() > atKill + 300);
            try (ServerProcess replica = ServerProcess.start(work, replicaDir, replicaHttp, replicaArgs)) {
                waitUntil(() -> sent.get() > atKill + 600);
                stop.set(true);
                load.join();
                assertThat(errors).isEmpty();
                String end = JSON.readTree(primary.get("/admin/status").body()).get("flushed_lsn").asText();
                waitUntil(() -> JSON.readTree(replica.get("/admin/status").body()).get("flushed_lsn").asText().equals(end));
                written = Lsn.parse(end);
                Map<Long, String> onPrimary = primary.records();
                assertThat(onPrimary).hasSize(sent.get());
                assertThat(replica.records()).as("same records at the same LSNs, none missing, none twice").isEqualTo(onPrimary);
                assertThat(replica.terminate()).isIn(0, 143);
            }
            assertThat(primary.terminate()).isIn(0, 143);
        }
        assertThat(WrittenSegments.assertIdentical(work.resolve("primary"), replicaDir, written)).isGreaterThan(5);
    }


    @Test
    void shouldAnswerAnOnCommitWaitingForAnAbsentReplicaWith503NotAsReplicatedWhenTheServerIsStopped() throws Exception {
        int port = ServerProcess.freePort();
        Path data = work.resolve("p");
        try (ServerProcess primary = ServerProcess.start(work, data, port, "--sync-replicas", "FIRST 1 (r1)")) {
            CompletableFuture<HttpResponse<String>> waiting = primary.http.sendAsync(
                    HttpRequest.newBuilder(primary.uri("/v1/records?durability=on"))
                            .POST(HttpRequest.BodyPublishers.ofString("nobody has me")).build(),
                    HttpResponse.BodyHandlers.ofString());
            // Stopped only once the commit is in the log and waiting: a request still on its way has no answer to get.
            waitUntil(() -> JSON.readTree(primary.get("/admin/status").body()).get("remote_wait_oldest_ms").asLong() > 0);
            assertThat(waiting).as("the commit waits for r1").isNotDone();
            try (Socket open = new Socket("127.0.0.1", port); // clients' connections, opened before the stop
                 Socket admin = new Socket("127.0.0.1", port)) {
                open.setSoTimeout(10_000);
                admin.setSoTimeout(10_000);
                RawHttp.proveAccepted(open); // else the stop may close the listener with them still in its queue
                RawHttp.proveAccepted(admin);
                long stopping = System.nanoTime();
                primary.signalTerm(); // SIGTERM, as an operator stopping the primary to fail over
                waitUntil(() -> !ready(primary)); // the stop began: later appends are refused
                // Both sent before either answer is read: the stop closes every connection soon after its waits end,
                // and a request still unsent then would meet a reset instead of its answer.
                open.getOutputStream().write(("POST /v1/records?durability=local HTTP/1.1\r\nHost: x\r\n"
                        + "Content-Length: 10\r\n\r\ntoo late 1").getBytes(StandardCharsets.US_ASCII));
                admin.getOutputStream().write(("PUT /admin/sync-replicas HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                        + "Content-Length: 12\r\n\r\nFIRST 1 (r1)").getBytes(StandardCharsets.US_ASCII));
                assertThat(new String(open.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
                        .as("an append on an open connection once the stop began").startsWith("HTTP/1.1 503")
                        .contains("\"error\":\"shutting_down\"");
                assertThat(new String(admin.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
                        .as("a policy set during the stop would revive the waits it ended").startsWith("HTTP/1.1 503")
                        .contains("\"error\":\"shutting_down\"");
                HttpResponse<String> answer = waiting.get(60, TimeUnit.SECONDS);
                assertThat(answer.statusCode()).as(answer.body()).isEqualTo(503);
                JsonNode body = JSON.readTree(answer.body());
                assertThat(body.get("error").asText()).isEqualTo("remote_commit_unconfirmed");
                assertThat(body.get("detail").asText()).contains("durable locally");
                assertThat(body.has("lsn")).isTrue();
                primary.terminate();
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopping))
                        .as("the stop ends the wait for the absent replica, not the whole 10 s drain").isLessThan(8_000);
            }
        }
        try (ServerProcess restarted = ServerProcess.start(work, data, port)) {
            assertThat(restarted.records()).as("the record was durable locally").containsValue("nobody has me")
                    .as("the append refused during the stop was not written").doesNotContainValue("too late 1");
        }
    }

    /** Whether {@code /ready} answers 200 (false once the server stops: 503, or no new connection taken). */
    private static boolean ready(ServerProcess server) {
        try {
            return server.get("/ready").statusCode() == 200;
        } catch (Exception stopped) {
            return false;
        }
    }

    @Test
    void shouldStartANewReplicaWithAnEmptyDirectoryFromAPrimaryThatHasTruncated() throws Exception {
        int replicationPort = ServerProcess.freePort();
        try (ServerProcess primary = ServerProcess.start(work, work.resolve("p"), ServerProcess.freePort(),
                "--replication-listen", "127.0.0.1:" + replicationPort, "--segment-size", "1048576")) {
            ByteBuffer batch = ByteBuffer.allocate(600 * 5004);
            for (int i = 0; i < 600; i++) {
                batch.putInt(5000).put(new byte[5000]);
            }
            for (int i = 0; i < 2; i++) {
                assertThat(primary.post("/v1/records/batch?durability=local", batch.array()).statusCode()).isEqualTo(200);
            }
            primary.post("/v1/records?durability=local", "newest".getBytes());
            String insert = JSON.readTree(primary.get("/admin/status").body()).get("insert_lsn").asText();
            assertThat(primary.post("/admin/checkpoint?lsn=" + insert, new byte[0]).statusCode()).isEqualTo(200);
            String oldest = JSON.readTree(primary.get("/admin/status").body()).get("oldest_lsn").asText();
            assertThat(Lsn.parse(oldest)).as("the primary removed its first segments").isGreaterThan(1048576L);

            try (ServerProcess replica = ServerProcess.start(work, work.resolve("r"), ServerProcess.freePort(),
                    "--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1")) {
                waitUntil(() -> {
                    JsonNode status = JSON.readTree(replica.get("/admin/status").body());
                    return status.get("primary_connected").asBoolean()
                            && status.get("flushed_lsn").asText().equals(insert);
                });
                JsonNode status = JSON.readTree(replica.get("/admin/status").body());
                assertThat(status.get("oldest_lsn").asText()).isEqualTo(oldest);
                assertThat(status.get("replication_error").isNull()).as(status.toString()).isTrue();
                assertThat(replica.records()).isEqualTo(primary.records());
            }
        }
    }

    @Test
    void shouldChangeTheSynchronousPolicyLive() throws Exception {
        try (ServerProcess primary = ServerProcess.start(work, work.resolve("primary"), ServerProcess.freePort(),
                "--replication-listen", "127.0.0.1:" + ServerProcess.freePort(), "--remote-commit-timeout-ms", "300")) {
            HttpResponse<String> set = primary.put("/admin/sync-replicas", "ANY 1 (r1, r2)");
            assertThat(set.body()).contains("ANY 1 (r1, r2)");
            HttpResponse<String> waiting = primary.post("/v1/records?durability=on", "x".getBytes());
            assertThat(waiting.statusCode()).isEqualTo(503);
            assertThat(waiting.body()).contains("remote_commit_timeout").contains("durable locally");
            HttpResponse<String> bad = primary.put("/admin/sync-replicas", "SOME 1 (a)");
            assertThat(bad.statusCode()).isEqualTo(400);
            primary.put("/admin/sync-replicas", "");
            assertThat(primary.post("/v1/records?durability=on", "y".getBytes()).statusCode()).as("no policy: ON acts as local").isEqualTo(200);
        }
    }

    @Test
    void shouldResumeAConsumerOnThePromotedReplicaFromTheCursorItCommittedOnTheKilledPrimary() throws Exception {
        int replicationPort = ServerProcess.freePort();
        List<String> lsns = new ArrayList<>();
        try (ServerProcess primary = ServerProcess.start(work, work.resolve("primary"), ServerProcess.freePort(),
                "--replication-listen", "127.0.0.1:" + replicationPort, "--sync-replicas", "FIRST 1 (r1)");
             ServerProcess replica = ServerProcess.start(work, work.resolve("replica"), ServerProcess.freePort(),
                     "--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1",
                     "--replication-listen", "127.0.0.1:" + ServerProcess.freePort())) {
            waitUntil(() -> JSON.readTree(primary.get("/admin/status").body()).get("replicas").size() == 1);
            for (int i = 0; i < 10; i++) {
                lsns.add(JSON.readTree(primary.post("/v1/records?durability=on", ("event " + i).getBytes()).body()).get("lsn").asText());
            }
            // The consumer processed events 0..5: its cursor is at event 6 (committed at ON, the sidecar's default).
            HttpResponse<String> committed = primary.put("/v1/cursors/billing", "{\"lsn\":\"" + lsns.get(6) + "\"}");
            assertThat(committed.statusCode()).as(committed.body()).isEqualTo(200);
            // A replica serves reads from a cursor too (its reader thread finds the cursor's LSN, not the event loop).
            waitUntil(() -> {
                HttpResponse<String> r = replica.get("/v1/records?cursor=billing");
                return r.statusCode() == 200 && JSON.readTree(r.body()).get("records").size() == 4;
            });
            primary.kill();

            assertThat(replica.post("/admin/promote", new byte[0]).statusCode()).isEqualTo(200);
            JsonNode cursor = JSON.readTree(replica.get("/v1/cursors/billing").body());
            assertThat(cursor.get("lsn").asText()).as("the cursor survived the failover").isEqualTo(lsns.get(6));
            JsonNode page = JSON.readTree(replica.get("/v1/records?cursor=billing").body());
            assertThat(page.get("records")).hasSize(4);
            assertThat(new String(Base64.getDecoder().decode(page.get("records").get(0).get("data").asText()), StandardCharsets.UTF_8))
                    .isEqualTo("event 6");
            assertThat(replica.put("/v1/cursors/billing", "{\"lsn\":\"" + lsns.get(9) + "\"}").statusCode())
                    .as("the promoted replica takes the consumer's next commit").isEqualTo(200);
        }
    }

    /**
     * zstd dictionaries across processes (docs/format.md, "zstd dictionaries"): a primary trains its dictionary and
     * ships records compressed with it and the copies that precede them; the replica reads them back byte for byte,
     * and once promoted goes on compressing with the same dictionary (the newest copy it holds).
     */
    @Test
    void shouldReplicateDictionaryCompressedRecordsAndCompressWithTheDictionaryOncePromoted() throws Exception {
        int replicationPort = ServerProcess.freePort();
        String[] log = {"--compression", "zstd", "--segment-size", "1048576"};
        try (ServerProcess primary = ServerProcess.start(work, work.resolve("primary"), ServerProcess.freePort(),
                concat(log, "--replication-listen", "127.0.0.1:" + replicationPort));
             ServerProcess replica = ServerProcess.start(work, work.resolve("replica"), ServerProcess.freePort(),
                     concat(log, "--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1"))) {
            int events = 0;
            long lastBatchStart = 0;
            for (int batch = 0; batch < 10; batch++, events += 2000) {
                if (batch == 9) { // the dictionary trains in the background once the first MiB of samples is in
                    waitUntil(() -> primary.output().contains("trained zstd dictionary"));
                }
                lastBatchStart = Lsn.parse(JSON.readTree(primary.get("/admin/status").body()).get("insert_lsn").asText());
                ByteArrayOutputStream body = new ByteArrayOutputStream();
                DataOutputStream out = new DataOutputStream(body);
                for (int i = events; i < events + 2000; i++) {
                    byte[] e = OrderEvents.event(i);
                    out.writeInt(e.length);
                    out.write(e);
                }
                HttpResponse<String> appended = primary.post("/v1/records/batch?durability=local", body.toByteArray());
                assertThat(appended.statusCode()).as(appended.body()).isEqualTo(200);
            }
            String insert = JSON.readTree(primary.get("/admin/status").body()).get("insert_lsn").asText();
            long alone = 24 + 4 + Zstd.compress(OrderEvents.event(events - 1), 3).length;
            assertThat((Lsn.parse(insert) - lastBatchStart) / 2000).as("bytes per record of the primary's last batch; "
                    + "compressed alone: %d", alone).isLessThan(alone * 6 / 10);
            waitUntil(() -> JSON.readTree(replica.get("/admin/status").body()).get("flushed_lsn").asText().equals(insert));
            Map<Long, String> shipped = primary.records();
            assertThat(shipped).hasSize(events);
            waitUntil(() -> replica.records().equals(shipped));
            primary.kill();

            assertThat(replica.post("/admin/promote", new byte[0]).statusCode()).isEqualTo(200);
            long before = Lsn.parse(JSON.readTree(replica.get("/admin/status").body()).get("insert_lsn").asText());
            // The first zstd payload makes the log look for the dictionary it carries (in the background); the next
            // one writes a copy of it into the current segment; the rest are measured.
            replica.post("/v1/records?durability=local", OrderEvents.event(events));
            waitUntil(() -> replica.output().contains("compressing small zstd payloads with dictionary"));
            replica.post("/v1/records?durability=local", OrderEvents.event(events + 1));
            long start = Lsn.parse(JSON.readTree(replica.get("/admin/status").body()).get("insert_lsn").asText());
            for (int i = events + 2; i <= events + 101; i++) {
                assertThat(replica.post("/v1/records?durability=local", OrderEvents.event(i)).statusCode()).isEqualTo(200);
            }
            long end = Lsn.parse(JSON.readTree(replica.get("/admin/status").body()).get("insert_lsn").asText());
            assertThat((end - start) / 100).as("bytes per record on the promoted replica; compressed alone: %d (from %s)",
                    alone, Lsn.format(before)).isLessThan(alone * 6 / 10);
            Map<Long, String> after = replica.records();
            assertThat(after).hasSize(events + 102);
            assertThat(after.values()).contains(new String(OrderEvents.event(events + 101), StandardCharsets.UTF_8));
        }
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
