package io.walden.core.internal;

import io.walden.core.internal.archive.Archiver;
import io.walden.core.internal.segment.SegmentRegistry;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * What the group's archive holds, as far as this log knows: the one place that says which segments truncation must
 * keep for the archive, on a primary and on a replica alike, and what a log tells its own replicas
 * (docs/replication.md, "Retention and the archive").
 *
 * <ul>
 *   <li>A log that takes appends (a primary) knows its own archive: its {@link Archiver}'s markers; with no archiver,
 *       it keeps nothing for an archive.</li>
 *   <li>A log that refuses appends (a replica; a group member in standby, fenced or paused) learns it from its primary,
 *       which sends the start of its oldest segment not archived (a frame of its own, whenever it moves). It keeps every
 *       segment from there on, with or without an archiver of its own: promoted after its primary died with uploads
 *       pending, it is the only place those segments are. Until its primary has said, it keeps everything.</li>
 * </ul>
 *
 * <p>Thread-safety: {@link #upstream} is atomic; the receiver sets it, a role change lowers it (never raises it),
 * truncation (under the admin lock) and senders read it. The archiver reads its own markers on any thread.
 */
public final class ArchiveFloor {
    /** Nothing learnt yet: everything is kept. */
    static final long UNKNOWN = 0;

    private final LogPositions positions;
    private final SegmentRegistry registry;
    /** Why local appends are refused, or null ({@link WalReplication#refusal()}; the replication side is made after this). */
    private final Supplier<String> refusal;
    /** The log's archiver, or null when it is not archived (made after this, from the parts; read at each call). */
    private final Supplier<Archiver> archiver;
    /** What the primary last said (see {@link io.walden.core.archive.ArchivedLog#archivedUpstream()}). */
    private final AtomicLong upstream = new AtomicLong(UNKNOWN);

    ArchiveFloor(LogPositions positions, SegmentRegistry registry, Supplier<String> refusal, Supplier<Archiver> archiver) {
        this.positions = positions;
        this.registry = registry;
        this.refusal = refusal;
        this.archiver = archiver;
    }

    /** Whether the log takes local appends: it is a primary, and the archive it knows is its own. */
    boolean ownArchive() {
        return refusal.get() == null && positions.readLimit() == Long.MAX_VALUE;
    }

    /** The LSN below which truncation may remove segments as far as the archive is concerned (MAX_VALUE: all). */
    public long forTruncation() {
        Archiver a = archiver.get();
        if (a != null) {
            return a.retentionFloor(); // its markers, and on a replica what the primary said
        }
        return ownArchive() ? Long.MAX_VALUE : upstream.get();
    }

    /**
     * What this log tells its replicas: every segment beginning below it is in the archive (MAX_VALUE: there is no
     * archive). A cascading replica passes on what its own primary said.
     */
    public long toReplicas() {
        if (!ownArchive()) {
            return upstream.get();
        }
        Archiver a = archiver.get();
        if (a == null) {
            return Long.MAX_VALUE;
        }
        // Never past the segment being written, which is never archived: MAX_VALUE says "no archive", not "all archived".
        return Math.min(a.retentionFloor(), registry.segmentStart(positions.insertLsn()));
    }

    public long upstream() {
        return upstream.get();
    }

    /** The primary said so (a replica's receiver). */
    public void learnt(long floor) {
        upstream.set(floor);
    }

    /**
     * The log begins to follow a primary (it took appends until now), or was rewound to {@code lsn}: what it knew of
     * the archive may not hold for the bytes it has from here on, so it keeps everything until its primary says.
     */
    void forget(long lsn) {
        long start = registry.segmentStart(lsn);
        upstream.accumulateAndGet(start, Math::min); // atomic against a report being learnt meanwhile
    }
}
