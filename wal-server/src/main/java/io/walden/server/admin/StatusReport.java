package io.walden.server.admin;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.walden.core.Cursors;
import io.walden.core.Durability;
import io.walden.core.Epoch;
import io.walden.core.Lsn;
import io.walden.core.RecordTime;
import io.walden.core.RetentionStatus;
import io.walden.core.RecoveryReport;
import io.walden.core.Wal;
import io.walden.core.WalStatus;
import io.walden.core.archive.ArchiverStatus;
import io.walden.replication.primary.ReplicaStatus;
import io.walden.replication.primary.ReplicationServer;
import io.walden.server.BuildInfo;
import io.walden.server.Following;
import io.walden.server.ReplicationRole;
import io.walden.server.group.FailoverController;
import io.walden.server.http.ClusterCatalog;
import io.walden.server.http.CursorApi;
import io.walden.server.logs.LogCatalog;

import java.io.File;
import java.net.InetSocketAddress;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * {@code GET /admin/status} (docs/http-api.md): the server's state as one JSON object, which the status page also
 * renders. Field names are a contract used by tools outside this repository.
 *
 * <p>Thread-safety: {@link #build} from any thread; every figure is read from the log's and replication's own
 * thread-safe views, so the object is a moment's picture, not a consistent snapshot across parts.
 */
final class StatusReport {
    private final Wal wal;
    private final PrometheusMeterRegistry registry;
    private final ReplicationRole role;
    /** This server's part in a replica group, or null for a server on its own. */
    private final FailoverController group;
    private final Listening listening;
    private final LogCatalog logs;
    private final AppendRates rates;
    /** The cluster this server is part of, or null. */
    private volatile ClusterCatalog cluster;

    StatusReport(Wal wal, PrometheusMeterRegistry registry, ReplicationRole role, FailoverController group, Listening listening,
                 LogCatalog logs, AppendRates rates) {
        this.wal = wal;
        this.logs = logs;
        this.rates = rates;
        this.registry = registry;
        this.role = role;
        this.group = group;
        this.listening = listening;
    }

    void inCluster(ClusterCatalog cluster) {
        this.cluster = cluster;
    }

    /** The status, with failure texts passed through {@code redact} (which hides secrets from a caller). */
    Map<String, Object> build(UnaryOperator<String> redact) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("version", BuildInfo.version());
        s.put("uptime_seconds", BuildInfo.uptime().toSeconds());
        Following replica = role.replica();
        ReplicationServer replication = role.server();
        // A group member that neither follows nor leads (electing, fenced) is not a primary: it takes no appends.
        s.put("role", replica == null && (group == null || group.isPrimary()) ? "primary" : "replica");
        if (replica != null) {
            s.put("primary", replica.primary().getHostString() + ":" + replica.primary().getPort());
            s.put("primary_connected", replica.isStreaming());
            s.put("replication_error", replica.fatalError());
            s.put("last_connection_error", replica.lastError());
            s.put("apply_error", replica.applyError());
            s.put("apply_lsn", Lsn.format(replica.appliedLsn()));
            // What this replica's readers see up to: what its primary reported flushed (docs/replication.md).
            s.put("read_limit_lsn", Lsn.format(Math.min(wal.readLimit(), wal.flushedLsn())));
            s.put("rewinds", replica.rewinds());
            s.put("archive_bytes_fetched", replica.archiveBytes());
        }
        WalStatus st = wal.status();
        s.put("insert_lsn", Lsn.format(wal.insertLsn()));
        s.put("written_lsn", Lsn.format(wal.writtenLsn()));
        s.put("flushed_lsn", Lsn.format(wal.flushedLsn()));
        s.put("oldest_lsn", Lsn.format(wal.oldestLsn()));
        s.put("segments", st.segmentCount());
        s.put("bytes", st.retainedBytes());
        long onDisk = st.segmentFilesBytes();
        s.put("segment_files_bytes", onDisk < 0 ? null : onDisk);
        s.put("data_dir", wal.directory().toAbsolutePath().toString());
        s.put("disk", disk(wal.directory().toAbsolutePath().toFile()));
        s.put("durability", wal.config().durability().configName());
        s.put("sync_method", wal.config().syncMethod().name().toLowerCase(Locale.ROOT));
        s.put("transport", listening.transport());
        Map<String, Object> listen = new LinkedHashMap<>();
        listen.put("http", listening.httpUrl().get());
        listen.put("replication", replication == null ? null : address(replication.address()));
        s.put("listen", listen);
        s.put("auth_token_required", listening.tokenRequired());
        s.put("epoch", st.epoch());
        List<Map<String, Object>> history = new ArrayList<>();
        for (Epoch e : st.history().epochs()) {
            history.add(Map.of("epoch", e.number(), "start_lsn", Lsn.format(e.startLsn())));
        }
        s.put("history", history);
        s.put("failed", st.isFailed());
        s.put("failure", st.failureReason() == null ? null : redact.apply(st.failureReason()));
        s.put("log_id", String.format("%016x", st.logId()));
        long appends = 0;
        for (Durability d : Durability.values()) {
            appends += (long) registry.get("walden.appends").tag("durability", d.configName()).functionCounter().count();
        }
        s.put("appends_total", appends);
        s.put("flushes_total", st.flushCount());
        RecoveryReport r = st.recoveryReport();
        Map<String, Object> rec = new LinkedHashMap<>();
        rec.put("created_new_log", r.createdNewLog());
        rec.put("records_scanned", r.recordsScanned());
        rec.put("segments_scanned", r.segmentsScanned());
        rec.put("scan_start_lsn", Lsn.format(r.scanStartLsn()));
        rec.put("end_lsn", Lsn.format(r.endLsn()));
        rec.put("bytes_cut_off", r.bytesCutOff());
        rec.put("shut_down_cleanly", r.shutDownCleanly());
        rec.put("reason", r.reason());
        rec.put("duration_ms", r.durationNanos() / 1_000_000);
        s.put("recovery", rec);
        s.put("sync_replicas", replication == null || replication.policy() == null ? null : replication.policy().toString());
        s.put("sync_satisfied", syncSatisfied(replication));
        // Durable commits held by the policy: /ready stays 200 (the log serves), this says they are stuck.
        s.put("remote_wait_oldest_ms", st.oldestRemoteWait().toMillis());
        s.put("remote_wait_warning", st.remoteWaitWarning());
        s.put("replicas", replicas(replication));
        List<Map<String, Object>> cursors = new ArrayList<>();
        for (Cursors.Cursor c : wal.cursors().list()) {
            cursors.add(CursorApi.json(c));
        }
        s.put("cursors", cursors);
        s.put("logs", logs());
        s.put("archive", st.archiver().map(StatusReport::archive).orElse(null));
        s.put("retention", retention(st.retention()));
        List<Map<String, Object>> slots = new ArrayList<>();
        if (replication != null) {
            replication.slots().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
                Map<String, Object> slot = new LinkedHashMap<>();
                slot.put("name", e.getKey());
                slot.put("lsn", Lsn.format(e.getValue()));
                slots.add(slot);
            });
        }
        s.put("replication_slots", slots);
        s.put("group", group == null ? null : group.status());
        ClusterCatalog c = cluster;
        s.put("cluster", c == null ? null : c.overview());
        return s;
    }

    /** Every log as {@code GET /v1/logs} lists it: the log {@code default} (the status's own) first. */
    private List<Map<String, Object>> logs() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (String name : logs.names()) {
            Wal log = logs.find(name);
            if (log != null) { // else deleted since the names were read
                Map<String, Object> summary = LogDescriptions.summary(name, log, rates);
                summary.put("archive", log.status().archiver().map(StatusReport::archive).orElse(null));
                out.add(summary);
            }
        }
        return out;
    }

    /**
     * Whether enough replicas count for the synchronous policy now ({@code sync} or {@code quorum}) for a remote
     * commit to be confirmed; null without a policy.
     */
    private static Boolean syncSatisfied(ReplicationServer replication) {
        if (replication == null || replication.policy() == null) {
            return null;
        }
        long counting = replication.replicaStatus().stream()
                .filter(r -> r.syncState().equals("sync") || r.syncState().equals("quorum")).count();
        return counting >= replication.policy().count();
    }

    private static List<Map<String, Object>> replicas(ReplicationServer replication) {
        List<Map<String, Object>> out = new ArrayList<>();
        if (replication == null) {
            return out;
        }
        for (ReplicaStatus p : replication.replicaStatus()) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("name", p.name());
            r.put("state", p.state());
            r.put("sent_lsn", Lsn.format(p.sentLsn()));
            r.put("write_lsn", Lsn.format(p.writeLsn()));
            r.put("flush_lsn", Lsn.format(p.flushLsn()));
            r.put("apply_lsn", Lsn.format(p.applyLsn()));
            r.put("write_lag_ms", p.writeLagMillis() < 0 ? null : p.writeLagMillis()); // from sending until reported
            r.put("flush_lag_ms", p.flushLagMillis() < 0 ? null : p.flushLagMillis());
            r.put("apply_lag_ms", p.applyLagMillis() < 0 ? null : p.applyLagMillis());
            r.put("sync_state", p.syncState());
            out.add(r);
        }
        return out;
    }

    /**
     * The data directory's file system, as {@code df} shows it (the same figures as the {@code disk_*_bytes} meters):
     * its size, what is used, and what Walden may still write there (free to unprivileged users).
     */
    private static Map<String, Object> disk(File dir) {
        long total = dir.getTotalSpace(); // one statfs each: 0 when the directory cannot be read
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("total_bytes", total);
        m.put("used_bytes", total - dir.getFreeSpace());
        m.put("free_bytes", dir.getUsableSpace());
        return m;
    }

    private static String address(InetSocketAddress a) {
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    /** Retention's limits, what it removed, and who holds back what it would remove (docs/operations.md, "Retention"). */
    static Map<String, Object> retention(RetentionStatus r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("time_seconds", r.time() == null ? null : r.time().toSeconds());
        m.put("bytes", r.bytes() > 0 ? r.bytes() : null);
        m.put("removed_segments", r.removedSegments());
        List<Map<String, Object>> held = new ArrayList<>();
        for (RetentionStatus.Held h : r.heldBy()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("holder", h.holder());
            one.put("bytes", h.bytes());
            one.put("from_lsn", Lsn.format(h.fromLsn()));
            one.put("since", RecordTime.format(h.since()));
            held.add(one);
        }
        m.put("held_by", held);
        return m;
    }

    /** A log's archiver as the status and a log's description show it ({@code archive}; docs/http-api.md). */
    static Map<String, Object> archive(ArchiverStatus a) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("target", a.target());
        m.put("archived_lsn", Lsn.format(a.archivedLsn()));
        m.put("pending_segments", a.pendingSegments());
        m.put("last_error", a.lastError());
        m.put("lag_bytes", a.lagBytes());
        m.put("archived_segments", a.archivedSegments());
        m.put("failures", a.failures());
        m.put("dropped_segments", a.droppedSegments());
        m.put("blocking_appends", a.blocking());
        var missing = a.missing();
        m.put("missing", missing == null ? null
                : Map.of("from_lsn", Lsn.format(missing.fromLsn()), "to_lsn", Lsn.format(missing.toLsn())));
        return m;
    }
}
