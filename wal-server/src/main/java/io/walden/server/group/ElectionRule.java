package io.walden.server.group;

import io.walden.core.Lsn;
import io.walden.replication.policy.SyncPolicy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Who should lead the group now, from what the members published: a pure function, so that every member computes
 * the same answer from the same view, and the rule can be tested on its own. Only the member it names joins the
 * leader latch; the latch and the versioned epoch write make it safe when two members briefly disagree.
 *
 * <p>The rule (docs/operations.md, "Who is elected"), once the primary the epoch record names is gone:
 * <ul>
 *   <li>Only members that are {@link Member.State#LOOKING} count: they follow no primary and receive nothing, so
 *       their flushed positions are final. No election while a member still follows (it stops within a tick of
 *       seeing the primary gone). A member's position on a log compares by the epoch its flushed end is in, then by
 *       the flushed position (PostgreSQL's timeline and LSN); each log has its own history, sender and window, so a
 *       member may be ahead on one log and behind on another.</li>
 *   <li>Eligible are the members named in the synchronous policy ({@code FIRST k}/{@code ANY k} over N names, the lost
 *       primary's own name not counted), and the lost primary itself when it came back (it holds all it acknowledged,
 *       on every log). Without a policy every member is eligible: an {@code ON} commit then waited for no replica.</li>
 *   <li>An {@code ON} commit on log L was acknowledged once k of the N held it flushed. So once R ≥ N − k + 1 of them
 *       report, every acknowledged record of L lies within the (k − (N − R))-th highest position they report on L
 *       (with all reporting the k-th; {@code ANY 1}: the highest). A candidate must reach
 *       that bound on every log any counted member holds: a log it does not hold counts as position 0 for it, and a
 *       named log is told apart by its id as well as its name (deleted and created again, it is another log). So a log
 *       created or deleted around the failure that reached only some members makes only those candidates (a deletion may
 *       then be undone, never an acknowledged record lost). Fewer reports: no election; a member that cannot be counted
 *       keeps the group waiting rather than risk an acknowledged record.</li>
 *   <li>Among the members that reach every bound, the one at the highest position on the most logs, then the most
 *       caught up on {@code default}, then the smallest name. Without a policy there is no bound (an {@code ON} commit
 *       waited for no replica): the member at the highest position on the most logs is elected, positions crossing or
 *       not, as the most caught up always was. When none reaches every bound (positions cross: one ahead
 *       on a log, another on a second), nobody is elected, with a reason naming the logs and members, until the lost
 *       primary returns or the members' positions change (docs/operations.md, "When no member holds every log").</li>
 *   <li>A switchover names its target: it is the only candidate, once it holds the primary's last record of the log
 *       {@code default} (the primary checked every log's end before it handed over: {@link Handover}).</li>
 *   <li>A new group (no epoch record): the members that already have a log first, the most caught up; else the
 *       smallest name.</li>
 * </ul>
 */
final class ElectionRule {
    private ElectionRule() {
    }

    /** The outcome: the member that should lead, or null and why nobody should yet. */
    record Election(String candidate, String reason) {
        static Election none(String reason) {
            return new Election(null, reason);
        }
    }

    static Election decide(EpochRecord epoch, Map<String, Member> live, SyncPolicy policy) {
        if (epoch == null) {
            return newGroup(live);
        }
        if (epoch.handoverTo() != null) {
            Member target = live.get(epoch.handoverTo());
            if (target == null) {
                return Election.none("switchover to " + epoch.handoverTo() + ", which is not a member now");
            }
            return target.flushedLsn() >= epoch.handoverLsn() ? new Election(target.name(), "switchover")
                    : Election.none("switchover to " + target.name() + ", which does not hold the primary's end yet");
        }
        Member primary = live.get(epoch.primary());
        if (primary != null && primary.state() != Member.State.LOOKING) {
            return Election.none("the primary " + epoch.primary() + " is a member");
        }
        for (Member m : live.values()) {
            if (m.state() == Member.State.REPLICA || m.state() == Member.State.STARTING) {
                return Election.none("waiting for " + m.name() + " to stop following and report its final position");
            }
        }
        Set<String> named = new TreeSet<>();
        int required = 1;
        if (policy != null) {
            named.addAll(policy.names());
            named.remove(epoch.primary());
            required = Math.max(1, named.size() - policy.count() + 1);
        }
        List<Member> eligible = new ArrayList<>();
        List<Member> counted = new ArrayList<>();
        Member returned = null;
        for (Member m : live.values()) {
            if (m.state() != Member.State.LOOKING || m.epoch() == 0) {
                continue; // following, failed, or with no log yet: holds nothing the election can count on
            }
            // The lost primary, back with its log (its end in the record's epoch), holds all it acknowledged, on every log.
            if (m.name().equals(epoch.primary()) && m.epoch() == epoch.epoch()) {
                returned = m;
                eligible.add(m);
            } else if (policy == null || named.contains(m.name())) {
                eligible.add(m);
                counted.add(m);
            }
        }
        if (eligible.isEmpty() || (returned == null && counted.size() < required)) {
            return Election.none("waiting for " + required + " of " + (policy == null ? "the members" : named)
                    + " to report a final position (" + counted.size() + " have)");
        }
        // Without a policy an ON commit waited for no replica: no replica's position bounds anything, and a group whose
        // positions cross elects the member that holds the most rather than wait for a promise nobody made.
        Map<LogKey, Position> bounds = policy == null ? Map.of() : bounds(counted.size() >= required ? counted : List.of(),
                Math.min(counted.size(), Math.max(1, policy.count() - (named.size() - counted.size()))), returned);
        List<Member> safe = new ArrayList<>();
        List<String> lacking = new ArrayList<>();
        for (Member m : eligible) {
            String behind = m == returned ? null : firstBehind(m, bounds);
            if (behind == null) {
                safe.add(m);
            } else {
                lacking.add(m.name() + " " + behind);
            }
        }
        if (safe.isEmpty()) {
            return Election.none("no member holds every acknowledged record of every log: " + String.join("; ", lacking)
                    + " (it waits for the lost primary " + epoch.primary() + " to return)");
        }
        Member best = safe.stream().max(Comparator.comparingInt((Member m) -> logsAtMost(m, eligible))
                .thenComparing(MOST_CAUGHT_UP)).orElseThrow();
        return new Election(best.name(), "most caught up (epoch " + best.epoch() + ", "
                + Lsn.format(best.flushedLsn()) + (best.logs().isEmpty() ? "" : "; the highest on " + logsAtMost(best, eligible)
                + " of its " + (best.logs().size() + 1) + " logs") + ")");
    }

    /** A log as the election tells logs apart: by name, and for a named log by id (one created again is another). */
    record LogKey(String name, long logId) implements Comparable<LogKey> {
        static final LogKey DEFAULT = new LogKey("default", 0);

        @Override
        public int compareTo(LogKey o) {
            int byName = name.compareTo(o.name);
            return byName != 0 ? byName : Long.compare(logId, o.logId);
        }
    }

    /** A member's position on a log, compared by epoch, then flushed end; a member without the log is at {@link #NONE}. */
    record Position(int epoch, long flushedLsn) implements Comparable<Position> {
        static final Position NONE = new Position(0, 0);

        @Override
        public int compareTo(Position o) {
            return epoch != o.epoch ? Integer.compare(epoch, o.epoch) : Long.compare(flushedLsn, o.flushedLsn);
        }

        @Override
        public String toString() {
            return "epoch " + epoch + ", " + Lsn.format(flushedLsn);
        }
    }

    static Map<LogKey, Position> positions(Member m) {
        Map<LogKey, Position> out = new TreeMap<>();
        out.put(LogKey.DEFAULT, new Position(m.epoch(), m.flushedLsn()));
        m.logs().forEach((name, p) -> out.put(new LogKey(name, p.logId()), new Position(p.epoch(), p.flushedLsn())));
        return out;
    }

    /**
     * Per log every counted member or the returned primary holds: the position a candidate must reach so that it holds
     * every acknowledged record of it. From the counted members, the {@code rank}-th highest (k - (N - R): every
     * acknowledged record is within it) (none counted: no bound
     * from them); from a returned primary, its own position (it holds all it acknowledged); the lower of the two.
     */
    private static Map<LogKey, Position> bounds(List<Member> counted, int rank, Member returned) {
        Set<LogKey> reported = new TreeSet<>();
        for (Member m : counted) {
            reported.addAll(positions(m).keySet());
        }
        if (returned != null) {
            reported.addAll(positions(returned).keySet());
        }
        Map<LogKey, Position> bounds = new TreeMap<>();
        for (LogKey log : reported) {
            Position bound = null;
            if (!counted.isEmpty()) {
                List<Position> all = new ArrayList<>();
                for (Member m : counted) {
                    all.add(positions(m).getOrDefault(log, Position.NONE));
                }
                all.sort(Comparator.reverseOrder());
                bound = all.get(rank - 1);
            }
            if (returned != null) {
                Position own = positions(returned).getOrDefault(log, Position.NONE);
                bound = bound == null || own.compareTo(bound) < 0 ? own : bound;
            }
            bounds.put(log, bound);
        }
        return bounds;
    }

    /** The first log on which {@code m} is below its bound, described; null when it reaches every bound. */
    private static String firstBehind(Member m, Map<LogKey, Position> bounds) {
        Map<LogKey, Position> own = positions(m);
        for (Map.Entry<LogKey, Position> b : bounds.entrySet()) {
            Position p = own.getOrDefault(b.getKey(), Position.NONE);
            if (p.compareTo(b.getValue()) < 0) {
                return "is behind on log " + b.getKey().name() + " (" + (p == Position.NONE ? "does not hold it" : p)
                        + "; another holds " + b.getValue() + ")";
            }
        }
        return null;
    }

    /** On how many logs {@code m} holds the highest position among {@code members}: the most of the tail kept. */
    private static int logsAtMost(Member m, List<Member> members) {
        Map<LogKey, Position> own = positions(m);
        int n = 0;
        for (Map.Entry<LogKey, Position> e : own.entrySet()) {
            boolean highest = true;
            for (Member o : members) {
                highest &= positions(o).getOrDefault(e.getKey(), Position.NONE).compareTo(e.getValue()) <= 0;
            }
            n += highest ? 1 : 0;
        }
        return n;
    }

    /**
     * By the epoch its flushed end is in, then the flushed position (PostgreSQL's timeline and LSN), then the smaller
     * name. The epoch comes first: a member that followed a later primary holds that primary's history, whose start
     * was past every record acknowledged before it.
     */
    private static final Comparator<Member> MOST_CAUGHT_UP = Comparator.comparingInt(Member::epoch)
            .thenComparingLong(Member::flushedLsn).thenComparing(Member::name, Comparator.reverseOrder());

    private static Election newGroup(Map<String, Member> live) {
        if (live.isEmpty()) {
            return Election.none("no members");
        }
        for (Member m : live.values()) {
            if (m.state() == Member.State.STARTING) {
                return Election.none(m.name() + " is still opening its log");
            }
        }
        Member best = live.values().stream().max(MOST_CAUGHT_UP).orElseThrow();
        return new Election(best.name(), "a new group");
    }
}
