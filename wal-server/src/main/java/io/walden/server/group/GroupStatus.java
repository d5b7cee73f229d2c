package io.walden.server.group;

import io.walden.core.Lsn;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The {@code group} object of {@code /admin/status}: field names are a contract (docs/http-api.md). */
final class GroupStatus {
    private GroupStatus() {
    }

    static Map<String, Object> json(GroupCoordinator coordinator, String name, Member.State state, EpochRecord epoch,
                                    Map<String, Member> live, String election, long elections, long sessionLosses) {
        Map<String, Object> g = new LinkedHashMap<>();
        g.put("coordinator", coordinator.uri().toString());
        g.put("connection", coordinator.isConnected() ? "connected"
                : coordinator.connection() == null ? "connecting" : coordinator.connection().name().toLowerCase(Locale.ROOT));
        g.put("session_timeout_ms", coordinator.sessionTimeoutMs()); // granted by ZooKeeper: the one in force
        g.put("requested_session_timeout_ms", coordinator.requestedSessionTimeoutMs());
        g.put("name", name);
        g.put("state", state.wireName());
        g.put("epoch", epoch == null ? null : epoch.epoch());
        g.put("primary", epoch == null ? null : epoch.primary());
        Member primary = epoch == null ? null : live.get(epoch.primary());
        g.put("primary_http", primary == null || primary.state() != Member.State.PRIMARY ? null : primary.http());
        g.put("handover_to", epoch == null ? null : epoch.handoverTo());
        g.put("election", election);
        g.put("elections", elections);
        g.put("session_losses", sessionLosses);
        List<Map<String, Object>> members = new ArrayList<>();
        for (Member m : live.values()) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("name", m.name());
            j.put("state", m.state().wireName());
            j.put("epoch", m.epoch());
            j.put("flushed_lsn", Lsn.format(m.flushedLsn()));
            j.put("http", m.http());
            j.put("replication", m.replication());
            Map<String, Object> logs = new LinkedHashMap<>();
            m.logs().forEach((log, p) -> logs.put(log, Map.of("epoch", p.epoch(), "flushed_lsn", Lsn.format(p.flushedLsn()))));
            j.put("logs", logs);
            members.add(j);
        }
        g.put("members", members);
        return g;
    }
}
