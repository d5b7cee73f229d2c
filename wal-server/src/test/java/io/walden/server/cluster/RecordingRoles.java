package io.walden.server.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A server's {@link LogRoles} that does nothing but record each call, with when it came, in a list shared by every
 * server of a test (so the test sees one ordered history of the cluster); and refuses the first promotion of each log
 * in a set shared the same way, as Walden refuses a copy that may not lead. Any thread.
 */
final class RecordingRoles implements LogRoles {
    enum Kind {
        BECOME_REPLICA, BECOME_PRIMARY, REFUSED_PRIMARY, STEP_DOWN, BECOME_OFFLINE, DROP, SESSION_ENDED,
        CONNECTION_LOST, CONNECTION_RESTORED
    }

    record Call(long nanos, String server, String log, Kind kind) {
    }

    private final String server;
    private final List<Call> history;
    private final Set<String> refuseOnce;

    RecordingRoles(String server, List<Call> history) {
        this(server, history, Set.of());
    }

    /** @param refuseOnce the logs whose next promotion (on any server sharing the set) is refused; removed as refused */
    RecordingRoles(String server, List<Call> history, Set<String> refuseOnce) {
        this.server = server;
        this.history = history;
        this.refuseOnce = refuseOnce;
    }

    static List<Call> newHistory() {
        return new CopyOnWriteArrayList<>();
    }

    /** The calls of {@code kind} at or after {@code sinceNanos}, in order. */
    static List<Call> since(List<Call> history, long sinceNanos, Kind kind) {
        List<Call> calls = new ArrayList<>();
        for (Call call : history) {
            if (call.nanos() >= sinceNanos && call.kind() == kind) {
                calls.add(call);
            }
        }
        return calls;
    }

    private void record(String log, Kind kind) {
        history.add(new Call(System.nanoTime(), server, log, kind));
    }

    @Override
    public void becomeReplica(String log) {
        record(log, Kind.BECOME_REPLICA);
    }

    @Override
    public void becomePrimary(String log) {
        if (!refuseOnce.isEmpty() && refuseOnce.remove(log)) {
            record(log, Kind.REFUSED_PRIMARY);
            throw new IllegalStateException(server + " may not lead " + log + " (the test refuses it)");
        }
        record(log, Kind.BECOME_PRIMARY);
    }

    @Override
    public void stepDown(String log) {
        record(log, Kind.STEP_DOWN);
    }

    @Override
    public void becomeOffline(String log) {
        record(log, Kind.BECOME_OFFLINE);
    }

    @Override
    public void drop(String log) {
        record(log, Kind.DROP);
    }

    @Override
    public void sessionEnded(String log) {
        record(log, Kind.SESSION_ENDED);
    }

    /** Recorded with the log "*": it concerns every log of the server. */
    @Override
    public void connectionLost() {
        record("*", Kind.CONNECTION_LOST);
    }

    @Override
    public void connectionRestored() {
        record("*", Kind.CONNECTION_RESTORED);
    }
}
