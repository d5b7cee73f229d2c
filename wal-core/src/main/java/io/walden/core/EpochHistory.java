package io.walden.core;

import java.util.ArrayList;
import java.util.List;

/**
 * The epochs a log went through, oldest first (PostgreSQL's timeline history file): numbers strictly increase,
 * start LSNs never decrease, and the first is epoch 1 at LSN 0 unless older epochs were forgotten. Immutable.
 *
 * <p>What it is for: two logs with the same id hold the same bytes up to where their histories part. A replica
 * may follow a primary only if the primary's history contains the replica's current epoch, starting at the same
 * LSN, and the primary's copy of that epoch runs at least to the replica's end; otherwise the replica holds
 * records the primary never had (it was an old primary, or a primary of a rival promotion) and must be rebuilt.
 */
public final class EpochHistory {
    private static final EpochHistory INITIAL = new EpochHistory(List.of(new Epoch(1, 0)));
    private final List<Epoch> epochs;

    private EpochHistory(List<Epoch> epochs) {
        this.epochs = List.copyOf(epochs);
    }

    /** A new log's history: epoch 1 from the start. */
    public static EpochHistory initial() {
        return INITIAL;
    }

    /**
     * @throws IllegalArgumentException when the list is empty, numbers do not strictly increase, or starts decrease
     */
    public static EpochHistory of(List<Epoch> epochs) {
        if (epochs.isEmpty()) {
            throw new IllegalArgumentException("an epoch history has at least one epoch");
        }
        for (int i = 1; i < epochs.size(); i++) {
            Epoch before = epochs.get(i - 1);
            Epoch e = epochs.get(i);
            if (e.number() <= before.number() || e.startLsn() < before.startLsn()) {
                throw new IllegalArgumentException("epoch " + e + " cannot follow " + before
                        + ": numbers must increase and start LSNs must not decrease");
            }
        }
        return new EpochHistory(epochs);
    }

    public List<Epoch> epochs() {
        return epochs;
    }

    /** The epoch appends are written in now: the last one. */
    public Epoch current() {
        return epochs.get(epochs.size() - 1);
    }

    /** The epoch {@code number} of this history, or null if it has none such. */
    public Epoch find(int number) {
        for (Epoch e : epochs) {
            if (e.number() == number) {
                return e;
            }
        }
        return null;
    }

    /**
     * The epoch that wrote the record ending at {@code endLsn}, as a log ending there should name itself to a
     * primary: the last epoch starting before it (an epoch starting there or further on has written nothing of it
     * yet: an adopted one not yet lived, or a promotion that took no append, e.g. a group member elected that died
     * before anyone followed it, whose rival successor then never knew of it). The first epoch for a log that is empty.
     */
    public Epoch at(long endLsn) {
        Epoch found = epochs.get(0);
        for (Epoch e : epochs) {
            if (e.startLsn() < endLsn) {
                found = e;
            }
        }
        return found;
    }

    /** Where epoch {@code number} ends in this history: the next epoch's start, or {@code Long.MAX_VALUE} for the current. */
    public long endOf(int number) {
        for (int i = 0; i < epochs.size(); i++) {
            if (epochs.get(i).number() == number) {
                return i + 1 < epochs.size() ? epochs.get(i + 1).startLsn() : Long.MAX_VALUE;
            }
        }
        throw new IllegalArgumentException("epoch " + number + " is not in the history " + this);
    }

    /**
     * Whether a log whose current epoch is {@code epoch} and which ends at {@code endLsn} can follow a log with
     * this history: null when it can, else why not (in words an operator can act on).
     */
    public String divergence(Epoch epoch, long endLsn) {
        Epoch mine = find(epoch.number());
        if (mine == null) {
            return "its epoch " + epoch + " is not in this log's history " + this;
        }
        if (mine.startLsn() != epoch.startLsn()) {
            return "its epoch " + epoch + " is not this log's epoch " + mine + " (a rival promotion)";
        }
        long end = endOf(epoch.number());
        if (endLsn > end) {
            return "it ends at " + Lsn.format(endLsn) + " but epoch " + epoch.number() + " ended at " + Lsn.format(end)
                    + " in this log's history " + this + ": it holds records this log never had";
        }
        return null;
    }

    /**
     * Where a log in {@code epoch} that ends at {@code endLsn} must rewind to before it can follow a log with this
     * history: the end of that epoch here, when this history holds the epoch (with the same start) and it ended before
     * {@code endLsn}; -1 when there is nothing to rewind (or the logs diverged otherwise: see {@link #divergence}).
     * The bytes between are records this log never had: a crash took them before they were flushed, or they were an
     * old primary's after a replica was promoted in its place.
     */
    public long rewindPoint(Epoch epoch, long endLsn) {
        Epoch mine = find(epoch.number());
        if (mine == null || mine.startLsn() != epoch.startLsn()) {
            return -1;
        }
        long end = endOf(epoch.number());
        return endLsn > end ? end : -1;
    }

    /**
     * Where a log with history {@code theirs}, ending at {@code endLsn} in an epoch this history does not hold, must
     * rewind to before it can follow a log with this history: the end of the newest epoch both hold (same number and
     * start), in whichever of the two histories ends it first. That happens in a replica group when a member elected
     * took appends and was lost before anyone followed it: the next election numbered its epoch past that one, so the
     * lost member's records in it were never acknowledged (operations.md, "Replica groups").
     *
     * @return the rewind point; -1 when the histories share no epoch (they diverged) or nothing lies beyond it
     */
    public long rewindPointPastUnknownEpochs(EpochHistory theirs, long endLsn) {
        for (int i = theirs.epochs.size() - 1; i >= 0; i--) {
            Epoch e = theirs.epochs.get(i);
            Epoch mine = find(e.number());
            if (mine != null && mine.startLsn() == e.startLsn()) {
                long to = Math.min(endOf(e.number()), theirs.endOf(e.number()));
                return to < endLsn ? to : -1;
            }
        }
        return -1;
    }

    /**
     * This history, cut back to what a log ending at {@code endLsn} has lived through, followed by a new epoch
     * starting there and numbered past every epoch known (so that no two promotions share a number).
     */
    public EpochHistory next(long endLsn) {
        return next(endLsn, 0);
    }

    /**
     * {@link #next(long)}, numbered at least {@code atLeast}: a replica group's coordinator may know of epochs this log
     * never lived (a member elected that died before anyone followed it), whose numbers must not be taken twice.
     */
    public EpochHistory next(long endLsn, int atLeast) {
        List<Epoch> kept = new ArrayList<>();
        for (Epoch e : epochs) {
            if (e.startLsn() <= endLsn || kept.isEmpty()) {
                kept.add(e);
            }
        }
        kept.add(new Epoch(Math.max(atLeast, current().number() + 1), Math.max(endLsn, kept.get(kept.size() - 1).startLsn())));
        return new EpochHistory(kept);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EpochHistory h && h.epochs.equals(epochs);
    }

    @Override
    public int hashCode() {
        return epochs.hashCode();
    }

    @Override
    public String toString() {
        return epochs.toString();
    }
}
