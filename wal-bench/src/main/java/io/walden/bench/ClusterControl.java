package io.walden.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * What {@link ClusterLoad} asks of a cluster of {@code walden serve --cluster} processes, over their HTTP API
 * (docs/http-api.md, docs/cluster.md): create logs, read {@code GET /admin/cluster}, wait until Helix's placement has
 * settled, and fill a log with data in batches at its primary. Redirects are never followed: the load goes to each
 * log's primary, looked up here.
 *
 * <p>Thread-safety: the HTTP client is shared and thread-safe; methods may be called from several threads.
 */
final class ClusterControl {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * What {@code GET /admin/cluster} said, when (System.nanoTime) it was asked, and what the caller's sampler read
     * just before it (CPU times, say; empty without one).
     */
    record View(JsonNode cluster, long atNanos, long[] sample) {
    }

    private static URI uri(InetSocketAddress server, String path) {
        return URI.create("http://" + server.getHostString() + ":" + server.getPort() + path);
    }

    /** {@code GET path} at {@code server}: its body, parsed; fails unless 200. */
    JsonNode getJson(InetSocketAddress server, String path) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri(server, path)).timeout(Duration.ofSeconds(30))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("GET " + path + " at " + server + " answered " + r.statusCode() + ": " + r.body());
        }
        return JSON.readTree(r.body());
    }

    /** Creations answered with an error although the cluster then listed the log (what they answered). */
    final List<String> creationErrors = new CopyOnWriteArrayList<>();

    /**
     * Creates each log with {@code replicas} copies, through the servers in turn, one creation at a time per server:
     * a server answers a creation once some server leads the log (about 10 s, docs/cluster.md) and works through its
     * creations one at a time (one admin worker), so more at once would only wait in its queue. Returns once every
     * creation answered 201.
     */
    void createLogs(List<String> logs, int replicas, List<InetSocketAddress> servers) {
        List<CompletableFuture<Void>> perServer = new ArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(servers.size()); // not the common pool: 1 thread on 2 cores
        for (int k = 0; k < servers.size(); k++) {
            InetSocketAddress server = servers.get(k);
            List<String> mine = new ArrayList<>();
            for (int i = k; i < logs.size(); i += servers.size()) {
                mine.add(logs.get(i));
            }
            perServer.add(CompletableFuture.runAsync(() -> {
                for (String log : mine) {
                    create(server, log, replicas);
                }
            }, threads));
        }
        try {
            perServer.forEach(CompletableFuture::join);
        } finally {
            threads.shutdownNow();
        }
    }

    private void create(InetSocketAddress server, String log, int replicas) {
        String body = "{\"name\":\"" + log + "\",\"settings\":{\"replicas\":" + replicas + "}}";
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri(server, "/v1/logs"))
                    .timeout(Duration.ofSeconds(90)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 201) {
                // A creation at one server asks the log's primary to describe it (10 s timeout); a primary busy with
                // a creation of its own answers that only after it: the log is in the cluster all the same.
                if (!getJson(server, "/admin/cluster").path("logs").has(log)) {
                    throw new IllegalStateException("creating log " + log + " at " + server + " answered "
                            + r.statusCode() + ": " + r.body());
                }
                creationErrors.add(log + " at " + server + ": " + r.statusCode() + " " + r.body());
                System.out.println("creating log " + log + " answered " + r.statusCode() + " " + r.body()
                        + ", but the cluster lists it: going on");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("creating log " + log + " at " + server, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Whether every one of {@code logs} is settled in this view: a primary that also holds the leadership record
     * ({@code leader}), {@code replicas} servers in sync, and no move in flight or waiting for the throttle.
     */
    static boolean logsSettled(JsonNode cluster, List<String> logs, int replicas) {
        for (String log : logs) {
            JsonNode l = cluster.path("logs").path(log);
            if (l.isMissingNode() || !l.path("primary").isTextual()
                    || !l.path("primary").asText().equals(l.path("leader").asText())
                    || l.path("in_sync").size() != replicas || !l.path("moves").isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /**
     * The primary of each log and its replicas, as one text per log ({@code primary/replica,replica}): two views with
     * the same placement give the same map.
     */
    static Map<String, String> placement(JsonNode cluster, List<String> logs) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String log : logs) {
            JsonNode l = cluster.path("logs").path(log);
            out.put(log, l.path("primary").asText() + "/" + l.path("replicas").toString() + "/" + l.path("moves"));
        }
        return out;
    }

    /**
     * Polls {@code GET /admin/cluster} at {@code server} every 100 ms until {@code settled} holds and the placement
     * stays the same for {@code stableMillis} (WAGED may hand a log over once more after it looked settled,
     * docs/cluster.md); returns the first view of that final placement, so that its time is when it settled.
     */
    View awaitSettled(InetSocketAddress server, List<String> logs, Predicate<JsonNode> settled, long stableMillis,
                      long timeoutMillis) throws IOException, InterruptedException {
        return awaitSettled(server, logs, settled, stableMillis, timeoutMillis, () -> new long[0]);
    }

    /** {@link #awaitSettled(InetSocketAddress, List, Predicate, long, long)}, calling {@code sampler} before each look. */
    View awaitSettled(InetSocketAddress server, List<String> logs, Predicate<JsonNode> settled, long stableMillis,
                      long timeoutMillis, Supplier<long[]> sampler) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        View first = null;
        Map<String, String> firstPlacement = null;
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            long[] sample = sampler.get();
            long at = System.nanoTime();
            last = getJson(server, "/admin/cluster");
            if (!settled.test(last)) {
                first = null;
            } else if (first == null || !placement(last, logs).equals(firstPlacement)) {
                first = new View(last, at, sample);
                firstPlacement = placement(last, logs);
            } else if (at - first.atNanos() >= TimeUnit.MILLISECONDS.toNanos(stableMillis)) {
                return first;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("the cluster did not settle within " + timeoutMillis / 1000 + " s; last view: "
                + last);
    }

    /** Each log's primary's HTTP address, from one view (its {@code servers}' {@code httpAddress}). */
    static Map<String, InetSocketAddress> primaries(JsonNode cluster, List<String> logs) {
        Map<String, InetSocketAddress> byServer = new LinkedHashMap<>();
        for (JsonNode s : cluster.path("servers")) {
            String address = s.path("httpAddress").asText();
            int colon = address.lastIndexOf(':');
            byServer.put(s.path("name").asText(), new InetSocketAddress(address.substring(0, colon),
                    Integer.parseInt(address.substring(colon + 1))));
        }
        Map<String, InetSocketAddress> out = new LinkedHashMap<>();
        for (String log : logs) {
            String primary = cluster.path("logs").path(log).path("primary").asText();
            InetSocketAddress a = byServer.get(primary);
            if (a == null) {
                throw new IllegalStateException("log " + log + "'s primary '" + primary + "' is not among the servers "
                        + byServer.keySet());
            }
            out.put(log, a);
        }
        return out;
    }

    /**
     * Appends {@code bytes} of records of {@code recordBytes} to {@code log} at its primary, in batches of
     * {@code batchRecords} at {@code on} (so its in-sync replica holds them too); fails on any answer but 200.
     */
    void fill(InetSocketAddress primary, String log, long bytes, int recordBytes, int batchRecords)
            throws IOException, InterruptedException {
        byte[] body = HttpMessages.batchBody(batchRecords, recordBytes);
        long perBatch = (long) batchRecords * recordBytes;
        for (long done = 0; done < bytes; done += perBatch) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri(primary, "/v1/logs/" + log
                            + "/records/batch?durability=on")).timeout(Duration.ofSeconds(60))
                    .header("Content-Type", "application/octet-stream")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IOException("a batch of log " + log + " at " + primary + " answered " + r.statusCode() + ": "
                        + r.body());
            }
        }
    }

    /** The bytes the named logs (every log but {@code default}) hold at {@code server}, from its /admin/status. */
    long namedLogBytes(InetSocketAddress server) throws IOException, InterruptedException {
        long sum = 0;
        for (JsonNode l : getJson(server, "/admin/status").path("logs")) {
            if (!l.path("name").asText().equals("default")) {
                sum += l.path("bytes").asLong();
            }
        }
        return sum;
    }
}
