package io.walden.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * The sidecar's section of {@code docs/benchmarks.md}, from {@link HttpLoad}'s JSON: its targets against the
 * embedded log and PostgreSQL measured in the same run, the table side by side, every scenario, and the plot
 * {@code benchmarks-http.svg}.
 */
final class HttpReport {
    private final JsonNode http;
    private final List<double[]> embedded;
    private final List<double[]> pg;
    private final Consumer<String> line;

    /**
     * @param embedded the embedded log's LOCAL commits/s by committer threads ({committers, rate})
     * @param pg       pgbench's tps by clients, empty when PostgreSQL was not measured
     */
    HttpReport(JsonNode http, List<double[]> embedded, List<double[]> pg, Consumer<String> line) {
        this.http = http;
        this.embedded = embedded;
        this.pg = pg;
        this.line = line;
    }

    void write() {
        line.accept("## The sidecar over HTTP");
        line.accept("");
        line.accept("`walden.jar serve` as a child process on the same machine and disk, driven by `HttpLoad` (wal-bench): closed-loop");
        line.accept("clients over keep-alive connections, one request in flight per connection (8 in the pipelined row), 64 B bodies");
        line.accept("(`POST /v1/records?durability=...`), batches of 16 such records (`POST /v1/records/batch`), and `GET /health`.");
        line.accept("The load generator runs on the same two cores as the server: both processes' CPU is in the last table.");
        line.accept("");
        targets();
        sideBySide();
        line.accept("![requests/s against connections, log-log](benchmarks-http.svg)");
        line.accept("");
        scenarios();
        batchingOverHttp();
        whereTheTimeWent();
    }

    /** How the sidecar gathers a flush's commits (docs/group-commit.md, "Over HTTP"), and what limits it here. */
    private void batchingOverHttp() {
        line.accept("### Batching over HTTP");
        line.accept("");
        line.accept("Event loops append without waiting as they decode requests and ask the log once per pass of reads; the log");
        line.accept("forces on that loop once the commits it expects have asked (or after four recent flush times), and otherwise");
        line.accept("the loop arms a timer and goes back to reading ([group-commit.md](group-commit.md), \"Over HTTP\"). Before it,");
        line.accept("measured with the same generator on 2026-11-25 (fdatasync ≈ 100 µs): 2.5 commits per force at 4 connections,");
        line.accept("4.9 at 16, 24.1 at 64; after it, in the same minutes, 15.8 at 16 and 60.7 at 64, and `local` at 16");
        line.accept("connections went from 27,700 to 36,000-39,000 req/s.");
        line.accept("");
        JsonNode r16 = batchingRow(16);
        if (r16 == null || r16.get("httpToEmbedded").asDouble() >= 0.7) {
            return;
        }
        line.accept("What keeps `local` below 0.7 × the embedded log at 16 connections is CPU, not batching: commits per force");
        line.accept("are the embedded log's, but each request costs the server and the load generator a `recv`, a `send` and an");
        line.accept("`epoll_wait` on loopback (the `server cpu` and `load generator cpu` columns add up to the two cores), which");
        line.accept("an embedded committer does not pay; `GET /health`, which touches no log at all, is the ceiling those leave.");
        line.accept("");
    }

    /** What profiling the sidecar found, and what was done about it (the investigation behind these figures). */
    private void whereTheTimeWent() {
        line.accept("### Where the time went, and what changed");
        line.accept("");
        line.accept("Profiled with async-profiler (wall-clock and CPU, per thread) under this generator and `wrk`. Before the changes,");
        line.accept("with the same generator on the same day: a lone `local` request ran at 0.63 × the embedded lone commit;");
        line.accept("`local` at 16 and 64 connections 10,269 and 24,798 req/s; `off` and `/health` at 16 connections 39,062 and");
        line.accept("47,259 req/s.");
        line.accept("");
        line.accept("1. **Two thread hand-offs per commit.** An append went event loop → `appendAsync` → background writer (woken");
        line.accept("   through a futex) → flush → the writer completed a future → `whenCompleteAsync` back to the event loop (woken");
        line.accept("   through its eventfd). The wall profile of a lone request: the writer spent 6 % of its time waking the event");
        line.accept("   loop, the event loop 5 % waking the writer, and each wake-up costs a reschedule on this VM. Now the event");
        line.accept("   loop that appended a batch of durable records flushes it itself at the end of its batch of reads when no");
        line.accept("   flush is in progress (`Wal.flushIfIdle`, PostgreSQL's backend-led flush), and the completion answers on that");
        line.accept("   loop directly: a lone commit costs no hand-off. When a flush is in progress, the background writer leads the");
        line.accept("   next and one hand-off brings each answer home. (`--flush-on-event-loop false` keeps event loops off the");
        line.accept("   disk entirely, at the old cost.)");
        line.accept("2. **One request at a time per connection.** Auto-read was switched off and on around every request (a");
        line.accept("   `FlowControlHandler`): two `epoll_ctl` calls per request, and a pipelining client got one commit per flush.");
        line.accept("   Now requests are read as they come, appends behind appends run at once (one flush covers them), and answers");
        line.accept("   are written in request order and flushed once per batch (`HttpConnection`).");
        line.accept("3. **Allocation per request.** A `QueryStringDecoder`, a `LinkedHashMap` through Jackson, a `CompletableFuture`");
        line.accept("   chain, an exchange, a response object and its header map. Now an append's parameters are matched in place,");
        line.accept("   its exchange is reused (it is the append's `AppendCompletion` and the task that carries the answer back),");
        line.accept("   and its answer is encoded straight into one pooled buffer; `/health`'s answer is a constant. What remains");
        line.accept("   per request is Netty's decoder's request object and headers.");
        line.accept("4. **Twice as many event loops as cores** (Netty's default): four loops trading places on two cores. Now one");
        line.accept("   per core, measured faster at every connection count here; and the epoll transport where it loads (NIO");
        line.accept("   otherwise, io_uring on request).");
        line.accept("5. **What is left is the kernel.** The CPU profile of `/health` at 16 connections now spends about two thirds");
        line.accept("   of the event loops' time in `send`, `recv` and `epoll_wait` (on loopback, `send` also runs the receiver's");
        line.accept("   TCP stack). The minimal C epoll responder measured beside (`c epoll floor`) pays the same, so the ratio to it");
        line.accept("   is what the server adds. On two cores shared with the load generator, that responder's own rate moves with");
        line.accept("   the minute (below 100,000 req/s at 16 connections on slow ones), and the sidecar's `off` and `/health` with it.");
        line.accept("");
    }

    private void targets() {
        line.accept("| target | measured | verdict |");
        line.accept("|---|---|---|");
        JsonNode lone = interleaved();
        if (lone != null) {
            double ratio = lone.get("medianRatio").asDouble();
            line.accept(String.format(Locale.ROOT, "| `local`, 1 connection ≥ 0.85 × the embedded lone commit (alternating 200 ms slices) "
                            + "| %,d vs %,d/s: median ratio **%.2f** (p25 %.2f, p75 %.2f) | %s |",
                    lone.get("httpRequestsPerSecond").asLong(), lone.get("embeddedCommitsPerSecond").asLong(), ratio,
                    lone.get("p25Ratio").asDouble(), lone.get("p75Ratio").asDouble(), verdict(ratio >= 0.85)));
        }
        batching();
        for (int n : batchingRow(16) != null ? new int[] {1} : new int[] {1, 16, 64, 256}) {
            JsonNode local = find("http local", n);
            double pgTps = at(pg, n);
            if (local != null && pgTps > 0) {
                double ratio = local.get("commitsPerSecond").asDouble() / pgTps;
                line.accept(String.format(Locale.ROOT, "| `local`, %d connection%s ≥ 2 × PostgreSQL's `synchronous_commit=on` tps at %d client%s "
                                + "(pgbench run after) | %,d vs %,.0f = **%.2f×** | %s |", n, n == 1 ? "" : "s", n, n == 1 ? "" : "s",
                        local.get("commitsPerSecond").asLong(), pgTps, ratio, verdict(ratio >= 2)
                                + (n == 1 && ratio < 2 ? ": both pay one fdatasync per lone commit" : "")));
            }
        }
        for (String name : new String[] {"http off", "http health"}) {
            JsonNode r = find(name, 16);
            if (r != null) {
                line.accept(String.format(Locale.ROOT, "| `%s` at 16 connections ≥ 100,000 req/s | %,d req/s (server %.2f cores, load generator %.2f) | %s |",
                        name.equals("http off") ? "durability=off" : "GET /health", r.get("commitsPerSecond").asLong(),
                        r.get("serverCpuCores").asDouble(), r.get("clientCpuCores").asDouble(),
                        verdict(r.get("commitsPerSecond").asLong() >= 100_000)));
            }
        }
        JsonNode floorHealth = find("c epoll floor health", 16);
        JsonNode health = find("http health", 16);
        if (floorHealth != null && health != null) {
            line.accept(String.format(Locale.ROOT, "| (the machine's floor: a minimal C epoll responder, same client, 16 connections) | %,d req/s: "
                            + "`GET /health` at **%.2f ×** the floor | - |", floorHealth.get("commitsPerSecond").asLong(),
                    health.get("commitsPerSecond").asDouble() / floorHealth.get("commitsPerSecond").asDouble()));
        }
        for (int n : new int[] {1, 4}) {
            JsonNode json = find("http read json", n);
            JsonNode binary = find("http read binary", n);
            if (json != null && binary != null) {
                long page = binary.get("recordsPerRequest").asLong();
                double jsonRate = json.get("commitsPerSecond").asDouble() * page;
                double binaryRate = binary.get("commitsPerSecond").asDouble() * page;
                line.accept(String.format(Locale.ROOT, "| reads of %d records of %d B per request, %d connection%s: binary frames "
                                + "beside JSON (base64) | %,.0f vs %,.0f records/s = **%.2f×** (p50 %d vs %d µs per page) | - |",
                        page, binary.get("payload").asInt(), n, n == 1 ? "" : "s", binaryRate, jsonRate, binaryRate / jsonRate,
                        binary.get("p50us").asLong(), json.get("p50us").asLong()));
            }
        }
        JsonNode pipelined = find("http local pipelined", 16);
        if (pipelined != null) {
            line.accept(String.format(Locale.ROOT, "| pipelining under load: answers in order, nothing lost | 16 connections × 8 in flight: "
                    + "%,d req/s, every answer 200 with increasing LSNs per connection (the run fails otherwise) | met |",
                    pipelined.get("commitsPerSecond").asLong()));
        }
        line.accept("");
    }

    /**
     * The batching targets: commits per force against the connections, and the interleaved rounds' ratios to the
     * embedded log and PostgreSQL ({@link InterleavedBatching}), with the raw force's latency that says how fast the
     * disk was in those minutes.
     */
    private void batching() {
        for (String name : new String[] {"http local", "http on replicated"}) {
            for (int n : new int[] {4, 16, 64}) {
                JsonNode r = find(name, n);
                if (r != null && r.hasNonNull("commitsPerFlush")) {
                    double perFlush = r.get("commitsPerFlush").asDouble();
                    line.accept(String.format(Locale.ROOT, "| `%s`%s, %d connections: commits per force ≥ 0.8 × N | %.1f = **%.2f N** | %s |",
                            name.startsWith("http on") ? "on" : "local", name.endsWith("replicated") ? " (FIRST 1 replica, loopback)" : "",
                            n, perFlush, perFlush / n, verdict(perFlush >= 0.8 * n)));
                }
            }
        }
        for (int n : new int[] {16, 64, 256}) {
            JsonNode r = batchingRow(n);
            if (r != null) {
                double ratio = r.get("httpToEmbedded").asDouble();
                line.accept(String.format(Locale.ROOT, "| `local`, %d connections ≥ 0.7 × embedded LOCAL, %d threads (median of %d interleaved rounds) "
                                + "| %,.0f vs %,.0f/s: **%.2f×** (raw force %.0f µs) | %s |", n, n, r.get("rounds").asInt(),
                        r.get("http").asDouble(), r.get("embedded").asDouble(), ratio, r.get("rawForceUs").asDouble(),
                        verdict(ratio >= 0.7) + (ratio < 0.7 ? ": see “Batching over HTTP”" : "")));
            }
        }
        for (int n : new int[] {16, 64}) {
            JsonNode r = batchingRow(n);
            if (r != null && r.has("httpToLower")) {
                double ratio = r.get("httpToLower").asDouble();
                line.accept(String.format(Locale.ROOT, "| `local`, %d connections ≥ 0.7 × the lower of embedded LOCAL and `GET /health` "
                                + "(median of %d interleaved rounds) | %,.0f vs %,.0f and %,.0f/s: **%.2f×** (server CPU %.1f against %.1f µs "
                                + "per request) | %s |", n, r.get("rounds").asInt(), r.get("http").asDouble(), r.get("embedded").asDouble(),
                        r.get("health").asDouble(), ratio, r.get("serverCpuUsPerRequest").asDouble(),
                        r.get("healthServerCpuUsPerRequest").asDouble(), verdict(ratio >= 0.7)));
            }
        }
        for (int n : new int[] {16, 64}) {
            JsonNode r = batchingRow(n);
            if (r != null && r.has("httpToPg")) {
                double ratio = r.get("httpToPg").asDouble();
                line.accept(String.format(Locale.ROOT, "| `local`, %d connections ≥ 2 × PostgreSQL `on`, %d clients (median of %d interleaved rounds) "
                                + "| %,.0f vs %,.0f tps: **%.2f×** (raw force %.0f µs) | %s |", n, n, r.get("rounds").asInt(),
                        r.get("http").asDouble(), r.get("pg").asDouble(), ratio, r.get("rawForceUs").asDouble(),
                        verdict(ratio >= 2)));
            }
        }
        JsonNode local64 = find("http local replicated", 64);
        JsonNode on64 = find("http on replicated", 64);
        if (local64 != null && on64 != null) {
            double ratio = on64.get("commitsPerSecond").asDouble() / local64.get("commitsPerSecond").asDouble();
            line.accept(String.format(Locale.ROOT, "| `on` ≥ 0.9 × `local` at 64 connections (FIRST 1 replica, loopback, adjacent windows) "
                    + "| %,d vs %,d req/s = **%.2f×** | %s |", on64.get("commitsPerSecond").asLong(),
                    local64.get("commitsPerSecond").asLong(), ratio, verdict(ratio >= 0.9)));
        }
        JsonNode r16 = batchingRow(16);
        if (r16 != null) {
            double ratio = r16.get("httpP99ToP50").asDouble();
            line.accept(String.format(Locale.ROOT, "| `local`, 16 connections: p99 ≤ 3 × p50 (median of %d interleaved rounds) | **%.2f ×** | %s |",
                    r16.get("rounds").asInt(), ratio, verdict(ratio <= 3)));
        }
    }

    private JsonNode batchingRow(int connections) {
        for (JsonNode r : http.path("results")) {
            if (r.path("kind").asText().equals(InterleavedBatching.KIND) && r.path("connections").asInt() == connections) {
                return r;
            }
        }
        return null;
    }

    private void sideBySide() {
        line.accept("| connections | HTTP `local` req/s | HTTP `off` req/s | HTTP `on` req/s | HTTP batch records/s (`local`) | `GET /health` req/s | C floor req/s | embedded LOCAL commits/s (threads) | PostgreSQL tps |");
        line.accept("|---|---|---|---|---|---|---|---|---|");
        for (int n : HttpLoad.CONNECTIONS) {
            JsonNode batch = find("http local batch", n);
            line.accept(String.format(Locale.ROOT, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |", n, rate(find("http local", n)),
                    rate(find("http off", n)), rate(find("http on", n)),
                    batch == null ? "-" : String.format(Locale.ROOT, "%,d", batch.get("commitsPerSecond").asLong() * batch.get("recordsPerRequest").asLong()),
                    rate(find("http health", n)), rate(find("c epoll floor health", n)), number(at(embedded, n)), number(at(pg, n))));
        }
        line.accept("");
    }

    private void scenarios() {
        line.accept("| scenario | connections | in flight each | req/s | p50 µs | p99 µs | p99.9 µs | server cpu | load generator cpu |");
        line.accept("|---|---|---|---|---|---|---|---|---|");
        for (JsonNode r : http.path("results")) {
            if (r.path("kind").asText().startsWith("interleaved")) {
                continue;
            }
            line.accept(String.format(Locale.ROOT, "| %s | %d | %d | %,d | %d | %d | %d | %.2f | %.2f |", r.get("name").asText(),
                    r.get("connections").asInt(), r.get("pipeline").asInt(), r.get("commitsPerSecond").asLong(),
                    r.get("p50us").asLong(), r.get("p99us").asLong(), r.get("p999us").asLong(),
                    r.get("serverCpuCores").asDouble(), r.get("clientCpuCores").asDouble()));
        }
        line.accept("");
    }

    /** requests/s against connections: HTTP local and off, the embedded log's LOCAL, PostgreSQL. */
    String plot() {
        return new LogLogPlot("connections (committers, clients)", "requests (commits) per second", 1, 256, 100, 1e7)
                .add("HTTP durability=local", "#1f77b4", 0, series("http local"))
                .add("HTTP durability=off", "#2ca02c", 0, series("http off"))
                .add("HTTP GET /health", "#9467bd", 0, series("http health"))
                .add("C epoll floor", "#999999", 2, series("c epoll floor health"))
                .add("embedded LOCAL", "#1f77b4", 2, embedded)
                .add("PostgreSQL (on)", "#d62728", 1, pg)
                .svg();
    }

    private List<double[]> series(String name) {
        List<double[]> out = new ArrayList<>();
        for (int n : HttpLoad.CONNECTIONS) {
            JsonNode r = find(name, n);
            if (r != null) {
                out.add(new double[] {n, r.get("commitsPerSecond").asDouble()});
            }
        }
        return out;
    }

    private JsonNode interleaved() {
        for (JsonNode r : http.path("results")) {
            if (r.path("kind").asText().equals("interleaved")) {
                return r;
            }
        }
        return null;
    }

    private JsonNode find(String name, int connections) {
        for (JsonNode r : http.path("results")) {
            if (r.path("name").asText().equals(name) && r.path("connections").asInt() == connections
                    && (name.endsWith("pipelined") || r.path("pipeline").asInt() == 1)) {
                return r;
            }
        }
        return null;
    }

    private static double at(List<double[]> points, int x) {
        for (double[] p : points) {
            if (p[0] == x) {
                return p[1];
            }
        }
        return 0;
    }

    private static String rate(JsonNode r) {
        return r == null ? "-" : String.format(Locale.ROOT, "%,d", r.get("commitsPerSecond").asLong());
    }

    private static String number(double v) {
        return v <= 0 ? "-" : String.format(Locale.ROOT, "%,.0f", v);
    }

    private static String verdict(boolean met) {
        return met ? "met" : "not met";
    }
}
