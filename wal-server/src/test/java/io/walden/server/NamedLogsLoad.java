package io.walden.server;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;

import static io.walden.core.Eventually.waitUntil;

/**
 * {@code ON} appends to many named logs at once, to whichever member says it is the primary: one thread per
 * {@code threads}-th of the logs, each appending to its logs in turn, one record at a time. Keeps what was acknowledged:
 * by whom, in which log, at which LSN. {@link #pause()} stops it between two appends (none in flight once it returns).
 */
final class NamedLogsLoad implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    record Ack(String member, String log, String lsn, String payload) {
    }

    private final List<String> logs;
    private final Supplier<String> primary;
    private final Function<String, ServerProcess> process;
    private final Queue<Ack> acks = new ConcurrentLinkedQueue<>();
    private final List<Thread> threads = new ArrayList<>();
    /** Appends under way: a thread counts itself in before it looks at {@link #paused}, so a pause sees it. */
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile boolean paused;
    private volatile boolean running = true;

    NamedLogsLoad(List<String> logs, int threadCount, Supplier<String> primary, Function<String, ServerProcess> process) {
        this.logs = logs;
        this.primary = primary;
        this.process = process;
        for (int t = 0; t < threadCount; t++) {
            List<String> mine = new ArrayList<>();
            for (int i = t; i < logs.size(); i += threadCount) {
                mine.add(logs.get(i));
            }
            Thread thread = new Thread(() -> run(mine), "named-load-" + t);
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
    }

    private void run(List<String> mine) {
        int seq = 0;
        String target = null;
        while (running) {
            boolean acked = false;
            inFlight.incrementAndGet();
            try {
                if (!paused && (target != null || (target = primary.get()) != null)) {
                    String log = mine.get(seq % mine.size());
                    String payload = log + "-" + seq++;
                    HttpResponse<String> r = process.apply(target).post("/v1/logs/" + log + "/records?durability=on",
                            payload.getBytes(StandardCharsets.UTF_8));
                    if (r.statusCode() == 200) {
                        acks.add(new Ack(target, log, JSON.readTree(r.body()).get("lsn").asText(), payload));
                        acked = true;
                    } else {
                        target = null; // refused: find the primary again
                    }
                }
            } catch (IOException | RuntimeException e) {
                target = null; // gone: find the primary again
            } catch (InterruptedException e) {
                return;
            } finally {
                inFlight.decrementAndGet();
            }
            if (!acked) {
                pace();
            }
        }
    }

    List<String> logs() {
        return logs;
    }

    List<Ack> acks() {
        return new ArrayList<>(acks);
    }

    int count() {
        return acks.size();
    }

    void awaitAcks(int n, int seconds) throws Exception {
        waitUntil(seconds, () -> count() >= n);
    }

    /** Stops appending; returns once no append is in flight. */
    void pause() throws Exception {
        paused = true;
        waitUntil(30, () -> inFlight.get() == 0);
    }

    void resume() {
        paused = false;
    }

    void stop() throws InterruptedException {
        running = false;
        for (Thread t : threads) {
            t.join(30_000);
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }

    /** The pace between a refused append or a pause and the next try (not a wait on a condition). */
    private void pace() {
        try {
            Thread.sleep(paused ? 5 : 20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
