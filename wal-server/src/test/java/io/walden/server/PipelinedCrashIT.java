package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Eventually;
import io.walden.core.Lsn;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sidecar killed with SIGKILL in the middle of pipelined load: several connections, each keeping 8 appends in
 * flight at every durability level. Every answer that came back before the kill came in order (LSNs increase per
 * connection); every durable append that was answered is in the log after a restart, byte for byte; nothing the log
 * returns after the restart is corrupt (recovery checks each record, and every payload must be one a client sent).
 */
@Isolated // runs alone, not beside another integration test class: it kills a server under pipelined load
@Timeout(180)
class PipelinedCrashIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] LEVELS = {"off", "local", "remote_write", "on", "remote_apply"};
    private static final int CONNECTIONS = 6;
    private static final int IN_FLIGHT = 8;

    @TempDir
    Path work;

    @Test
    void shouldKeepEveryAnsweredDurableAppendWhenKilledUnderPipelinedLoad() throws Exception {
        Path data = work.resolve("data");
        int port = ServerProcess.freePort();
        Map<Long, String> acknowledged = new ConcurrentHashMap<>();
        Map<String, Boolean> sent = new ConcurrentHashMap<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        AtomicLong answers = new AtomicLong();
        try (ServerProcess server = ServerProcess.start(work, data, port)) {
            List<PipelinedClient> clients = new ArrayList<>();
            for (int c = 0; c < CONNECTIONS; c++) {
                clients.add(new PipelinedClient(c, port, acknowledged, sent, errors, answers));
            }
            clients.forEach(PipelinedClient::start);
            Eventually.holdsWithin(20, () -> answers.get() >= 3000);
            server.kill(); // mid-load: requests in flight on every connection
            for (PipelinedClient c : clients) {
                c.join();
            }
        }
        assertThat(errors).isEmpty();
        assertThat(answers.get()).as("answers before the kill").isGreaterThan(1000);
        assertThat(acknowledged).as("answered durable appends").isNotEmpty();
        try (ServerProcess server = ServerProcess.start(work, data, port)) {
            Map<Long, String> found = server.records();
            for (Map.Entry<Long, String> e : acknowledged.entrySet()) {
                assertThat(found.get(e.getKey())).as("answered durable append at %s", Lsn.format(e.getKey())).isEqualTo(e.getValue());
            }
            for (String payload : found.values()) {
                assertThat(sent).as("every record read back is one a client sent").containsKey(payload);
            }
        }
    }

    /** One connection: a writer keeps {@link #IN_FLIGHT} appends outstanding, a reader matches answers in order. */
    private static final class PipelinedClient {
        private final int id;
        private final int port;
        private final Map<Long, String> acknowledged;
        private final Map<String, Boolean> sent;
        private final List<Throwable> errors;
        private final AtomicLong answers;
        private final Semaphore window = new Semaphore(IN_FLIGHT);
        private final ArrayDeque<String[]> outstanding = new ArrayDeque<>(); // {level, payload}, in request order
        private final AtomicBoolean gone = new AtomicBoolean();
        private Socket socket;
        private Thread writer;
        private Thread reader;

        PipelinedClient(int id, int port, Map<Long, String> acknowledged, Map<String, Boolean> sent, List<Throwable> errors,
                        AtomicLong answers) {
            this.id = id;
            this.port = port;
            this.acknowledged = acknowledged;
            this.sent = sent;
            this.errors = errors;
            this.answers = answers;
        }

        void start() {
            try {
                socket = new Socket("127.0.0.1", port);
                socket.setTcpNoDelay(true);
            } catch (IOException e) {
                errors.add(e);
                return;
            }
            writer = new Thread(this::write, "pipelined-writer-" + id);
            reader = new Thread(this::read, "pipelined-reader-" + id);
            writer.start();
            reader.start();
        }

        void join() throws InterruptedException {
            reader.join(30_000);
            gone.set(true);
            window.release(IN_FLIGHT);
            writer.join(30_000);
        }

        private void write() {
            try {
                OutputStream out = socket.getOutputStream();
                for (int i = 0; !gone.get(); i++) {
                    window.acquire();
                    if (gone.get()) {
                        return;
                    }
                    String level = LEVELS[i % LEVELS.length];
                    String payload = "connection " + id + " request " + i + " at " + level;
                    byte[] body = payload.getBytes(StandardCharsets.UTF_8);
                    synchronized (outstanding) {
                        outstanding.add(new String[] {level, payload});
                    }
                    sent.put(payload, Boolean.TRUE);
                    out.write(("POST /v1/records?durability=" + level + " HTTP/1.1\r\nHost: walden\r\nContent-Length: "
                            + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(body);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the server was killed: the reader decides what that means
            }
        }

        private void read() {
            try {
                InputStream in = new BufferedInputStream(socket.getInputStream());
                long lastLsn = -1;
                while (true) {
                    String answer = RawHttp.readAnswer(in);
                    if (answer == null) {
                        return; // the server is gone
                    }
                    String[] request;
                    synchronized (outstanding) {
                        request = outstanding.poll();
                    }
                    if (!answer.startsWith("HTTP/1.1 200")) {
                        errors.add(new AssertionError("connection " + id + ": " + answer));
                        return;
                    }
                    JsonNode body = JSON.readTree(answer.substring(answer.indexOf("\r\n\r\n") + 4));
                    long lsn = Lsn.parse(body.get("lsn").asText());
                    if (lsn <= lastLsn || !body.get("durability").asText().equals(request[0])) {
                        errors.add(new AssertionError("connection " + id + ": answer out of order: " + answer
                                + " after " + Lsn.format(lastLsn) + " for a request at " + request[0]));
                        return;
                    }
                    lastLsn = lsn;
                    if (!request[0].equals("off")) {
                        acknowledged.put(lsn, request[1]);
                    }
                    answers.incrementAndGet();
                    window.release();
                }
            } catch (IOException e) {
                // reset by the kill
            } catch (Throwable e) {
                errors.add(e);
            } finally {
                gone.set(true);
                window.release(IN_FLIGHT);
            }
        }
    }
}
