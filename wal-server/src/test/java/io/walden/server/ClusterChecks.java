package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Lsn;
import io.walden.core.WrittenSegments;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

import static io.walden.core.Eventually.holdsWithin;
import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What ClusterKillLoopIT checks of a cluster of jar processes (docs/cluster.md), through {@code GET /admin/cluster} and
 * each server's API: that its logs settled, that its primaries are balanced, that every acknowledged record is on its
 * log's primary, and that every replica is the primary's copy.
 *
 * <p>Thread-safety: the test's thread only.
 */
final class ClusterChecks {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ClusterProcesses servers;

    ClusterChecks(ClusterProcesses servers) {
        this.servers = servers;
    }

    /**
     * Waits until every log is settled: led by its placed primary, with 2 copies on running servers, both in sync, no
     * move in flight.
     */
    void awaitSettled(List<String> logs, Set<String> running) throws Exception {
        List<String> unsettled = new ArrayList<>();
        boolean settled = holdsWithin(90, () -> {
            JsonNode c = servers.cluster();
            unsettled.clear();
            for (String log : logs) {
                if (c == null || !settled(c.path("logs").path(log), running)) {
                    unsettled.add(log + (c == null ? "" : "=" + c.path("logs").path(log)));
                }
            }
            return unsettled.isEmpty();
        });
        assertThat(settled).as("logs not settled on %s after 90 s: %s", running, unsettled).isTrue();
    }

    private static boolean settled(JsonNode log, Set<String> running) {
        String primary = log.path("primary").asText(null);
        Set<String> copies = new HashSet<>(names(log.path("replicas")));
        copies.add(primary);
        return primary != null && primary.equals(log.path("leader").asText(null)) && copies.size() == 2
                && running.containsAll(copies) && new HashSet<>(names(log.path("in_sync"))).equals(copies)
                && log.path("moves").isEmpty();
    }

    static List<String> names(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    static Map<String, Integer> primariesOf(JsonNode cluster) {
        Map<String, Integer> out = new TreeMap<>();
        cluster.path("servers").forEach(s -> out.put(s.get("name").asText(), s.get("primaries").asInt()));
        return out;
    }

    /** No running server is primary of more than ⌈primaries / servers⌉ + 1 logs (WAGED balances them in time). */
    void assertBalanced(int logs, Set<String> running) throws Exception {
        long bound = (logs + running.size() - 1) / running.size() + 1;
        AtomicReference<Map<String, Integer>> counts = new AtomicReference<>(Map.of());
        boolean balanced = holdsWithin(60, () -> {
            JsonNode c = servers.cluster();
            counts.set(c == null ? Map.of() : primariesOf(c));
            return c != null && counts.get().entrySet().stream()
                    .allMatch(e -> !running.contains(e.getKey()) || e.getValue() <= bound);
        });
        System.out.printf("ClusterKillLoopIT: primaries per server at the end %s (bound %d)%n", counts.get(), bound);
        assertThat(balanced).as("primaries per server %s, each at most %d", counts.get(), bound).isTrue();
    }

    /**
     * Every log's acknowledged records are at their LSNs on its primary, each once; one client per log, so its
     * acknowledged LSNs rise in the order of its appends. Returns each log's end (flushed) on its primary.
     */
    Map<String, Long> assertEveryAcknowledgedRecordIsOnItsPrimary(List<String> logs, ClusterAppends load)
            throws Exception {
        JsonNode cluster = servers.cluster();
        Map<String, Long> ends = new LinkedHashMap<>();
        for (String log : logs) {
            ServerProcess primary = servers.get(cluster.path("logs").path(log).path("primary").asText()).process();
            Map<Long, String> records = primary.records("/v1/logs/" + log + "/records");
            List<ClusterAppends.Ack> acks = load.acks(log);
            assertThat(acks).as("appends acknowledged in %s", log).isNotEmpty();
            long previous = -1;
            for (ClusterAppends.Ack a : acks) {
                assertThat(a.lsn()).as("%s acknowledged by %s at %s after %s", a.payload(), a.server(), Lsn.format(a.lsn()),
                        Lsn.format(previous)).isGreaterThan(previous);
                assertThat(records.get(a.lsn())).as("%s acknowledged by %s at %s", a.payload(), a.server(),
                        Lsn.format(a.lsn())).isEqualTo(a.payload());
                previous = a.lsn();
            }
            assertThat(new HashSet<>(records.values())).as("records of %s, each payload once", log).hasSize(records.size());
            ends.put(log, Lsn.parse(JSON.readTree(primary.get("/v1/logs/" + log).body()).get("flushed_lsn").asText()));
        }
        return ends;
    }

    /**
     * Each replica holds the primary's end of its log, and once every server stopped, its segments are the primary's
     * byte for byte (a replica's records are not read over HTTP: a server redirects a read of a log it does not lead).
     */
    void assertReplicasAreThePrimarysCopy(List<String> logs, Map<String, Long> ends) throws Exception {
        JsonNode cluster = servers.cluster();
        Map<String, String> primaries = new HashMap<>();
        Map<String, List<String>> replicas = new HashMap<>();
        for (String log : logs) {
            primaries.put(log, cluster.path("logs").path(log).path("primary").asText());
            replicas.put(log, names(cluster.path("logs").path(log).path("replicas")));
            for (String replica : replicas.get(log)) {
                ServerProcess copy = servers.get(replica).process();
                waitUntil(30, () -> Lsn.parse(JSON.readTree(copy.get("/v1/logs/" + log).body()).get("flushed_lsn").asText())
                        == ends.get(log));
            }
        }
        for (ClusterProcesses.Server s : servers.all()) {
            assertThat(s.terminate()).as("%s stopped cleanly", s.name).isTrue();
        }
        int compared = 0;
        for (String log : logs) {
            Path reference = servers.get(primaries.get(log)).data.resolve("logs").resolve(log);
            for (String replica : replicas.get(log)) {
                compared += WrittenSegments.assertIdentical(reference, servers.get(replica).data.resolve("logs").resolve(log),
                        ends.get(log));
            }
        }
        System.out.printf("ClusterKillLoopIT: every replica of the %d logs is its primary's copy (%d segments compared)%n",
                logs.size(), compared);
    }
}
