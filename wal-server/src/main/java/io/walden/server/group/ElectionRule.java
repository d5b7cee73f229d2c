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
 *       on a log, another on a second), nobody is elected yet, with a reason naming the logs and members, and the
 *       election plans who can be made whole by copying same-epoch tails from the others ({@link CatchUp}). The member
 *       planned copies them ({@link TailCopy}) and publishes its positions; it then reaches every bound, and the next
 *       round elects it by this rule. When no member qualifies (the one that could lacks a log another reports, or what
 *       it lacks is in another epoch than its end), there is no plan: nobody is elected until the lost primary returns
 *       or the members' positions change (docs/operations.md, "When no member holds every log").</li>
 *   <li>A switchover names its target: it is the only candidate, once it holds the primary's last record of the log
 *       {@code default} (the primary checked every log's end before it handed over: {@link Handover}).</li>
 *   <li>A new group (no epoch record): the members that already have a log first, the most caught up; else the
 *       smallest name.</li>
 * </ul>
 */
final class ElectionRule {
    private ElectionRule() {
    }

    /**
     * The outcome: the member that should lead, or null and why nobody should yet; when nobody should because positions
     * cross, {@code catchUp} names the member that may lead once it holds the tails listed (else null).
     */
    record Election(String candidate, String reason, CatchUp catchUp) {
        Election(String candidate, String reason) {
            this(candidate, reason, null);
        }

        static Election none(String reason) {
            return new Election(null, reason);
        }
    }

    /**
     * What {@code member} lacks before it can be elected when no member reaches every bound: the tails of logs that
     * others hold further in the same epoch, which it copies ({@link TailCopy}). Once it holds them (same bytes at the
     * same LSNs) and publishes its positions, it reaches every bound and this rule elects it as usual.
     */
    record CatchUp(String member, List<Tail> tails) {
        CatchUp {
            tails = List.copyOf(tails);
        }

        @Override
        public String toString() {
            List<String> each = new ArrayList<>();
            for (Tail t : tails) {
                each.add(t.toString());
            }
            return member + " copies " + String.join(", ", each);
        }
    }

    /**
     * The records of log {@code log} (id {@code logId}; 0 for {@code default}) in {@code [fromLsn, toLsn)} that member
     * {@code from} holds flushed, in the same epoch as the copying member's end, and the copying member lacks.
     */
    record Tail(String log, long logId, String from, long fromLsn, long toLsn) {
        @Override
        public String toString() {
            return "log " + log + " [" + Lsn.format(fromLsn) + ", " + Lsn.format(toLsn) + ") from " + from;
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
            String why = "no member holds every acknowledged record of every log: " + String.join("; ", lacking);
            CatchUp catchUp = catchUp(eligible, bounds);
            return catchUp == null
                    ? Election.none(why + " (it waits for the lost primary " + epoch.primary() + " to return)")
                    : new Election(null, why + "; " + catchUp + " first", catchUp);
        }
        Member best = safe.stream().max(byRank(eligible)).orElseThrow();
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

    /**
     * When positions cross: the member that can be made to reach every bound by copying tails from the others, and
     * those tails; null when none can (the safe rule then waits). A candidate must hold every log any eligible member
     * reports, by name and id (a log it lacks, or one of another id, is not a tail: it would be the whole log, or
     * another log), and on each log below its bound be in the bound's epoch (a tail in the same epoch continues the same
     * history: both received it from one primary; another epoch may have diverged). On every log where another member
     * holds more in the candidate's epoch, it copies up to the highest such member, bound or not, so that it keeps all
     * the members hold. Among such candidates the best as {@link #decide} ranks them ({@link #byRank}).
     */
    private static CatchUp catchUp(List<Member> eligible, Map<LogKey, Position> bounds) {
        Set<LogKey> reported = new TreeSet<>();
        for (Member m : eligible) {
            reported.addAll(positions(m).keySet());
        }
        Member best = null;
        List<Tail> bestTails = null;
        for (Member m : eligible) {
            List<Tail> tails = tailsFor(m, eligible, reported, bounds);
            if (tails != null && (best == null || byRank(eligible).compare(m, best) > 0)) {
                best = m;
                bestTails = tails;
            }
        }
        return best == null ? null : new CatchUp(best.name(), bestTails);
    }

    /** The tails {@code m} must copy to reach every bound, or null when it cannot. */
    private static List<Tail> tailsFor(Member m, List<Member> eligible, Set<LogKey> reported, Map<LogKey, Position> bounds) {
        Map<LogKey, Position> own = positions(m);
        if (!own.keySet().containsAll(reported)) {
            return null;
        }
        List<Tail> tails = new ArrayList<>();
        for (LogKey log : reported) {
            Position p = own.get(log);
            Member donor = null;
            Position most = p;
            for (Member o : eligible) {
                Position q = positions(o).get(log);
                if (o != m && q != null && q.epoch() == p.epoch() && q.compareTo(most) > 0) {
                    donor = o;
                    most = q;
                }
            }
            if (most.compareTo(bounds.getOrDefault(log, Position.NONE)) < 0) {
                return null; // below the bound, and nobody holds the rest in its epoch
            }
            if (donor != null) {
                tails.add(new Tail(log.name(), log.logId(), donor.name(), p.flushedLsn(), most.flushedLsn()));
            }
        }
        return tails;
    }

    /** How {@link #decide} ranks candidates among {@code eligible}: the highest on the most logs, then the most caught up. */
    private static Comparator<Member> byRank(List<Member> eligible) {
        return Comparator.comparingInt((Member m) -> logsAtMost(m, eligible)).thenComparing(MOST_CAUGHT_UP);
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
