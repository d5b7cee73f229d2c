package io.walden.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Lsn;
import io.walden.server.contract.ContractCheckedClient;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.walden.core.Eventually.waitUntil;

/**
 * Appends at {@code on} to each of a cluster's logs, one client thread per log, as a client of a cluster does: to the
 * server that acknowledged its last append, or to any server when it has none; a 307 is followed to its
 * {@code Location} (the same request at the log's primary), and a refusal (503 while a log fails over, 409 from a
 * copy not leading yet, 404 from a server that does not know the log yet) or a lost connection sends the next append
 * to the next server. Only a 200 counts: each acknowledged payload is kept with its LSN, the server that acknowledged
 * it and when. Every append carries a payload never sent before (an unconfirmed one may be in the log, but never twice).
 *
 * <p>Thread-safety: the getters from any thread. One thread per log appends, so a log's acknowledgements are in the
 * order of its appends.
 */
final class ClusterAppends implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** No request waits longer: an append stuck behind a lost replica is answered within the 3 s lag by a live primary. */
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(15);
    private static final int MOST_REDIRECTS = 5;

    /**
     * An acknowledged append: {@code sentNanos} is when the client began it (before any redirect), {@code ackNanos}
     * when the 200 came (both {@link System#nanoTime()}).
     */
    record Ack(String log, long lsn, String payload, String server, long sentNanos, long ackNanos) {
    }

    private final ClusterProcesses servers;
    private final long paceMillis;
    private final HttpClient http = ContractCheckedClient.wrap(HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(2)).build());
    private final Map<String, List<Ack>> acks = new ConcurrentHashMap<>();
    /** Refusals by kind ({@code 503 remote_commit_unconfirmed}, {@code ConnectException}...): what the clients met. */
    private final Map<String, AtomicLong> refusals = new ConcurrentHashMap<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running = true;

    /** Starts appending to each log, one append after another, {@code paceMillis} apart. */
    ClusterAppends(List<String> logs, ClusterProcesses servers, long paceMillis) {
        this.servers = servers;
        this.paceMillis = paceMillis;
        for (String log : logs) {
            acks.put(log, new ArrayList<>());
            Thread t = new Thread(() -> appendTo(log), "appends-" + log);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
    }

    private void appendTo(String log) {
        List<String> bases = servers.all().stream().map(ClusterProcesses.Server::base).toList();
        int next = Math.floorMod(log.hashCode(), bases.size());
        String target = null; // the server that acknowledged the last append
        long seq = 0;
        while (running) {
            if (target == null) { // any server: the servers known when the load began, in turn
                target = bases.get(next++ % bases.size());
            }
            String payload = log + "-" + seq++;
            long sent = System.nanoTime();
            try {
                URI uri = URI.create(target + "/v1/logs/" + log + "/records?durability=on");
                HttpResponse<String> answer = null;
                for (int hop = 0; hop <= MOST_REDIRECTS; hop++) {
                    answer = http.send(HttpRequest.newBuilder(uri).timeout(REQUEST_TIMEOUT)
                            .POST(HttpRequest.BodyPublishers.ofString(payload, StandardCharsets.UTF_8)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    if (answer.statusCode() != 307) {
                        break;
                    }
                    uri = URI.create(answer.headers().firstValue("Location").orElseThrow());
                }
                if (answer.statusCode() == 200) {
                    long lsn = Lsn.parse(JSON.readTree(answer.body()).get("lsn").asText());
                    Ack ack = new Ack(log, lsn, payload, servers.nameAt(uri), sent, System.nanoTime());
                    List<Ack> mine = acks.get(log);
                    synchronized (mine) {
                        mine.add(ack);
                    }
                    target = uri.getScheme() + "://" + uri.getAuthority();
                    pause(paceMillis);
                    continue;
                }
                refused(answer.statusCode() + " " + JSON.readTree(answer.body()).path("error").asText());
            } catch (IOException e) {
                refused(e.getClass().getSimpleName());
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                refused(e.toString());
            }
            target = null;
            pause(20);
        }
    }

    private void refused(String kind) {
        refusals.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
    }

    /** The acknowledgements of {@code log}, in the order they came. */
    List<Ack> acks(String log) {
        List<Ack> mine = acks.get(log);
        synchronized (mine) {
            return new ArrayList<>(mine);
        }
    }

    long count() {
        return acks.keySet().stream().mapToLong(l -> acks(l).size()).sum();
    }

    /** The first acknowledgement of an append {@code log}'s client began after {@code nanos}. */
    Optional<Ack> firstSentAfter(String log, long nanos) {
        return acks(log).stream().filter(a -> a.sentNanos() - nanos > 0).findFirst();
    }

    /**
     * The longest any log's client waited, between {@code from} and {@code to}, from one acknowledgement to the next (or
     * to {@code to}, or from {@code from}), in milliseconds: how long appends were held up.
     */
    long longestWait(long from, long to) {
        long longest = 0;
        for (String log : acks.keySet()) {
            long previous = from;
            for (Ack a : acks(log)) {
                if (a.ackNanos() - from > 0 && a.ackNanos() - to < 0) {
                    longest = Math.max(longest, a.ackNanos() - previous);
                    previous = a.ackNanos();
                }
            }
            longest = Math.max(longest, to - previous);
        }
        return TimeUnit.NANOSECONDS.toMillis(longest);
    }

    /** Waits until every log has an acknowledgement of an append begun after {@code nanos}. */
    void awaitEveryLogAcknowledgedAfter(long nanos, int seconds) throws Exception {
        try {
            waitUntil(seconds, () -> acks.keySet().stream().allMatch(l -> firstSentAfter(l, nanos).isPresent()));
        } catch (AssertionError e) {
            List<String> stuck = acks.keySet().stream().filter(l -> firstSentAfter(l, nanos).isEmpty()).sorted().toList();
            throw new AssertionError("logs with no append acknowledged for " + seconds + " s: " + stuck
                    + "; the clients' refusals so far: " + refusals(), e);
        }
    }

    Map<String, Long> refusals() {
        Map<String, Long> out = new TreeMap<>();
        refusals.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    /** Writes every acknowledgement to {@code file}, a line each: log, LSN, payload, server, sent and acknowledged (ns). */
    void write(Path file) throws IOException {
        StringBuilder out = new StringBuilder("log\tlsn\tpayload\tserver\tsent_ns\tack_ns\n");
        for (String log : new TreeMap<>(acks).keySet()) {
            for (Ack a : acks(log)) {
                out.append(a.log()).append('\t').append(Lsn.format(a.lsn())).append('\t').append(a.payload()).append('\t')
                        .append(a.server()).append('\t').append(a.sentNanos()).append('\t').append(a.ackNanos()).append('\n');
            }
        }
        Files.writeString(file, out);
    }

    /** Stops every client after its append in flight; returns once all stopped. */
    void stop() throws InterruptedException {
        running = false;
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(30));
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
