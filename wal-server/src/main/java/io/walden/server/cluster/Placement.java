package io.walden.server.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Where one log is, as Helix last reported it: each server's role now ({@code current}, Helix's external view,
 * aggregated by the controller from the servers' own reports, so a transition shows a moment after it completed) and
 * the role Helix wants it to have ({@code target}, the best-possible assignment the controller computed last).
 * Where they differ, a move is in flight (or throttled, waiting its turn).
 *
 * @param log      the log
 * @param replicas the copies asked for, the primary included; Helix places at most one per live server
 * @param current  server name to role now
 * @param target   server name to the role Helix moves it to
 */
public record Placement(String log, int replicas, Map<String, Role> current, Map<String, Role> target) {

    public Placement {
        current = Map.copyOf(current);
        target = Map.copyOf(target);
    }

    /** The server that is primary now, if exactly one is. */
    public Optional<String> primary() {
        List<String> primaries = serversIn(Role.PRIMARY);
        return primaries.size() == 1 ? Optional.of(primaries.get(0)) : Optional.empty();
    }

    /** The servers holding the log in {@code role} now, by name. */
    public List<String> serversIn(Role role) {
        List<String> servers = new ArrayList<>();
        current.forEach((server, r) -> {
            if (r == role) {
                servers.add(server);
            }
        });
        servers.sort(null);
        return servers;
    }

    /** A server whose role is not yet the one Helix wants; {@code null} stands for "holds nothing". */
    public record Move(String server, Role from, Role to) {
    }

    /** The moves in flight: every server whose current role differs from its target, by name. */
    public List<Move> moves() {
        List<Move> moves = new ArrayList<>();
        TreeSet<String> servers = new TreeSet<>(current.keySet());
        servers.addAll(target.keySet());
        for (String server : servers) {
            Role now = current.get(server);
            Role wanted = target.get(server);
            if (now != wanted) {
                moves.add(new Move(server, now, wanted));
            }
        }
        return moves;
    }

    /** Whether Helix has nothing more to do for this log: every server is in its target role, and there is a primary. */
    public boolean settled() {
        return moves().isEmpty() && primary().isPresent();
    }
}
