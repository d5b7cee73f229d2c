package io.walden.server.group;

import io.walden.core.Lsn;
import io.walden.replication.policy.SyncPolicy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 *       seeing the primary gone). Members compare by the epoch their flushed end is in, then by the flushed
 *       position: the most caught up holds what any other holds of the history the group acknowledged.</li>
 *   <li>Eligible are the members named in the synchronous policy ({@code FIRST k}/{@code ANY k} over N names, the lost
 *       primary's own name not counted), and the lost primary itself when it came back (it holds all it acknowledged).
 *       Without a policy every member is eligible: an {@code ON} commit then waited for no replica.</li>
 *   <li>An {@code ON} commit was acknowledged once k of the N held it flushed. So once N − k + 1 of them report, at
 *       least one holds every acknowledged record, and the highest flushed position among the reporting eligible
 *       members is the candidate (ties go to the smallest name). Fewer reports: no election; a member that cannot be
 *       counted keeps the group waiting rather than risk an acknowledged record.</li>
 *   <li>A switchover names its target: it is the only candidate, once it holds the primary's last record.</li>
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
        int reporting = 0;
        boolean primaryBack = false;
        for (Member m : live.values()) {
            if (m.state() != Member.State.LOOKING || m.epoch() == 0) {
                continue; // following, failed, or with no log yet: holds nothing the election can count on
            }
            // The lost primary, back with its log (its end in the record's epoch), holds all it acknowledged.
            boolean returnedPrimary = m.name().equals(epoch.primary()) && m.epoch() == epoch.epoch();
            primaryBack |= returnedPrimary;
            if (policy == null || named.contains(m.name()) || returnedPrimary) {
                eligible.add(m);
                reporting += (policy == null || named.contains(m.name())) && !returnedPrimary ? 1 : 0;
            }
        }
        if (eligible.isEmpty() || (!primaryBack && reporting < required)) {
            return Election.none("waiting for " + required + " of " + (policy == null ? "the members" : named)
                    + " to report a final position (" + reporting + " have)");
        }
        Member best = eligible.stream().max(MOST_CAUGHT_UP).orElseThrow();
        return new Election(best.name(), "most caught up (epoch " + best.epoch() + ", "
                + Lsn.format(best.flushedLsn()) + ")");
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
