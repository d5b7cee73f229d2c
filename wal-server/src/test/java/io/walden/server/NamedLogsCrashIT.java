package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Lsn;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A server appending to 50 named logs killed -9 in the middle (docs/durability.md): after its restart every append it
 * acknowledged at {@code local} or {@code on} is in its log, at its LSN, and every record a log holds is one a client
 * sent to that log (the store's journal, written back at the restart, neither loses nor misplaces a record).
 */
class NamedLogsCrashIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int LOGS = 50;
    private static final int CLIENTS = 8;

    @TempDir
    Path work;

    @Test
    void everyAcknowledgedRecordOfFiftyLogsIsBackAfterKill9() throws Exception {
        Path data = work.resolve("data");
        int port = ServerProcess.freePort();
        Map<String, Map<Long, String>> acked = new ConcurrentHashMap<>(); // log -> lsn -> payload
        AtomicInteger acks = new AtomicInteger();
        // Small segments: 50 logs are created in a second, and their appends roll over segments.
        try (ServerProcess server = ServerProcess.start(work, data, port, "--segment-size", "1MiB")) {
            for (int l = 0; l < LOGS; l++) {
                HttpResponse<String> r = server.send("POST", "/v1/logs", "{\"name\": \"log-" + l + "\"}");
                assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
                acked.put("log-" + l, new ConcurrentHashMap<>());
            }
            List<Thread> clients = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                Thread t = new Thread(() -> {
                    for (int i = 0; ; i++) {
                        String log = "log-" + ((client * 7 + i) % LOGS);
                        String level = i % 2 == 0 ? "local" : "on";
                        String payload = log + " client " + client + " record " + i;
                        try {
                            HttpResponse<String> r = server.post("/v1/logs/" + log + "/records?durability=" + level,
                                    payload.getBytes(StandardCharsets.UTF_8));
                            if (r.statusCode() != 200) {
                                return;
                            }
                            acked.get(log).put(Lsn.parse(JSON.readTree(r.body()).get("lsn").asText()), payload);
                            acks.incrementAndGet();
                        } catch (Exception e) {
                            return; // the server is gone: what it acknowledged is counted
                        }
                    }
                });
                clients.add(t);
                t.start();
            }
            waitUntil(() -> acks.get() >= 1500);
            server.kill(); // while every client is in the middle of an append
            for (Thread t : clients) {
                t.join();
            }
        }
        try (ServerProcess server = ServerProcess.start(work, data, port)) {
            int checked = 0;
            for (Map.Entry<String, Map<Long, String>> log : acked.entrySet()) {
                Map<Long, String> found = server.records("/v1/logs/" + log.getKey() + "/records");
                for (Map.Entry<Long, String> e : log.getValue().entrySet()) {
                    assertThat(found.get(e.getKey())).as("%s at %s", log.getKey(), Lsn.format(e.getKey()))
                            .isEqualTo(e.getValue());
                    checked++;
                }
                assertThat(found.values()).as("every record of %s is one sent to it", log.getKey())
                        .allMatch(p -> p.startsWith(log.getKey() + " client "));
            }
            assertThat(checked).isGreaterThanOrEqualTo(1500);
            JsonNode logs = JSON.readTree(server.get("/v1/logs").body()).get("logs");
            assertThat(logs).hasSize(LOGS + 1);
        }
    }
}
