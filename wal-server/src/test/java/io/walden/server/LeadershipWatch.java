package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads {@code GET /admin/cluster} every {@link #PERIOD_MILLIS} while a cluster runs, and holds each log's leadership
 * record (docs/cluster.md, "Who may lead a log") to its rules over time: its epoch never goes back, and one epoch has
 * one leader. Its violations are kept, not thrown, so that the test reports them with everything else it found.
 *
 * <p>Thread-safety: its own thread reads; the getters from any thread.
 */
final class LeadershipWatch implements AutoCloseable {
    static final long PERIOD_MILLIS = 200;

    private record Seen(long epoch, String leader) {
    }

    /** A log's record as first read in a new epoch: when (System.nanoTime(), after the reading), and who leads it. */
    record Change(long nanos, long epoch, String leader) {
    }

    private final ClusterProcesses servers;
    private final Map<String, Seen> last = new HashMap<>();
    private final Map<String, List<Change>> changes = new HashMap<>();
    private final List<String> violations = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private int readings;
    private int epochsSeen;

    LeadershipWatch(ClusterProcesses servers) {
        this.servers = servers;
        this.thread = new Thread(this::run, "leadership-watch");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        while (running) {
            JsonNode cluster = servers.cluster();
            if (cluster != null) {
                check(cluster, System.nanoTime());
            }
            try {
                Thread.sleep(PERIOD_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private synchronized void check(JsonNode cluster, long nanos) {
        readings++;
        String from = cluster.path("server").asText();
        for (Iterator<Map.Entry<String, JsonNode>> it = cluster.path("logs").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> log = it.next();
            JsonNode record = log.getValue();
            if (!record.has("epoch") || record.get("leader").isNull()) {
                continue; // not led yet, or the record could not be read this time
            }
            Seen now = new Seen(record.get("epoch").asLong(), record.get("leader").asText());
            Seen before = last.put(log.getKey(), now);
            if (before == null || now.epoch() > before.epoch()) {
                changes.computeIfAbsent(log.getKey(), k -> new ArrayList<>())
                        .add(new Change(nanos, now.epoch(), now.leader()));
            }
            if (before == null) {
                epochsSeen++;
            } else if (now.epoch() < before.epoch()) {
                violations.add("log " + log.getKey() + ": epoch " + now.epoch() + " (" + now.leader() + ") read at " + from
                        + " after epoch " + before.epoch() + " (" + before.leader() + ")");
            } else if (now.epoch() == before.epoch() && !now.leader().equals(before.leader())) {
                violations.add("log " + log.getKey() + ": two leaders in epoch " + now.epoch() + ": " + before.leader()
                        + ", then " + now.leader() + " read at " + from);
            } else if (now.epoch() > before.epoch()) {
                epochsSeen++;
            }
        }
    }

    /** The first new epoch of {@code log} read after {@code nanos}. */
    synchronized Optional<Change> firstChangeAfter(String log, long nanos) {
        return changes.getOrDefault(log, List.of()).stream().filter(c -> c.nanos() - nanos > 0).findFirst();
    }

    synchronized List<String> violations() {
        return List.copyOf(violations);
    }

    /** How many distinct (log, epoch) the watch saw. */
    synchronized int epochsSeen() {
        return epochsSeen;
    }

    synchronized int readings() {
        return readings;
    }

    void stop() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(10_000);
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
