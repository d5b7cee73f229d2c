package io.walden.core.archive;

import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.internal.recovery.HistoryFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What an archive holds, and which object to read for each segment (PostgreSQL's {@code XLogFileReadAnyTLI}): the
 * newest archived epoch history (the one with the highest number), and for a segment, the object of the newest epoch
 * of that history that wrote into it, never of an epoch older than the one the reader is already in. An object of an
 * epoch is read only up to where the history ends that epoch, so an old primary's late upload (its epoch ended inside
 * the segment) gives the records both histories share and nothing after them, and objects of epochs the history does
 * not hold (a dead history) are never read. Objects named before epochs were ({@link ArchiveNames#LEGACY}) are read only
 * where no epoch-named object of their segment exists, and only before the first epoch-named one.
 *
 * <p>Thread-safety: immutable once read.
 */
public final class ArchiveCatalog {
    /** One object chosen for a segment; its bytes are read below {@code usableEnd} only. */
    public record Piece(String name, long start, int epoch, boolean partial, long size, long usableEnd) {
    }

    private final EpochHistory history;
    /** Per segment start: objects by epoch, sealed ones. */
    private final TreeMap<Long, Map<Integer, ArchiveTarget.StoredObject>> sealed = new TreeMap<>();
    /** Per segment start: partial objects by epoch. */
    private final TreeMap<Long, Map<Integer, ArchiveTarget.StoredObject>> partials = new TreeMap<>();

    private ArchiveCatalog(EpochHistory history, List<ArchiveTarget.StoredObject> objects) {
        this.history = history;
        for (ArchiveTarget.StoredObject o : objects) {
            ArchiveNames.Parsed p = ArchiveNames.parse(o.name());
            if (p != null) {
                (p.partial() ? partials : sealed).computeIfAbsent(p.start(), k -> new HashMap<>()).put(p.epoch(), o);
            }
        }
    }

    /**
     * Lists the archive once and reads its newest history ({@code scratch}: a directory for the download, or null for
     * the system's temporary directory).
     *
     * @throws IOException when the store fails, or the newest history is not one
     */
    public static ArchiveCatalog read(ArchiveTarget target, Path scratch) throws IOException {
        List<ArchiveTarget.StoredObject> objects = target.list();
        int newest = -1;
        for (ArchiveTarget.StoredObject o : objects) {
            newest = Math.max(newest, ArchiveNames.historyEpoch(o.name()));
        }
        EpochHistory history = EpochHistory.initial();
        if (newest > 0) {
            String name = ArchiveNames.history(newest);
            Path temp = scratch == null ? Files.createTempFile("walden-history", ".tmp")
                    : Files.createTempFile(scratch, "archive-history", ".tmp");
            try {
                if (!target.get(name, temp)) {
                    throw new IOException("object " + name + " vanished from the archive " + target.uri());
                }
                history = HistoryFile.parse(Files.readAllBytes(temp), target.uri() + "/" + name, null).history();
            } finally {
                Files.deleteIfExists(temp);
            }
            if (history.current().number() != newest) {
                throw new IOException("the archived history " + name + " in " + target.uri() + " ends in epoch "
                        + history.current().number() + ", not " + newest + ": it is not this archive's");
            }
        }
        return new ArchiveCatalog(history, objects);
    }

    /** The catalog of {@code objects} under {@code history} (what {@link #read} builds; for tests too). */
    static ArchiveCatalog of(EpochHistory history, List<ArchiveTarget.StoredObject> objects) {
        return new ArchiveCatalog(history, objects);
    }

    /** The newest history the archive holds (epoch 1 alone when it holds none). */
    public EpochHistory history() {
        return history;
    }

    /** The lowest segment start any object has, or -1 for an archive with no segment. */
    public long oldestStart() {
        long a = sealed.isEmpty() ? Long.MAX_VALUE : sealed.firstKey();
        long b = partials.isEmpty() ? Long.MAX_VALUE : partials.firstKey();
        long first = Math.min(a, b);
        return first == Long.MAX_VALUE ? -1 : first;
    }

    /** The size of a segment, as a sealed object's size says; -1 when the archive holds no sealed segment. */
    public long segmentSize() {
        return sealed.isEmpty() ? -1 : sealed.firstEntry().getValue().values().iterator().next().size();
    }

    /**
     * The first segment after {@code start} that {@code follow} could read (a run that stopped at {@code start} stopped at
     * a gap when there is one), or -1.
     */
    public long usableAfter(EpochHistory follow, long start, long segmentSize, int notBelow) {
        for (Long s = sealed.higherKey(start); s != null; s = sealed.higherKey(s)) {
            if (choose(follow, s, segmentSize, notBelow) != null) {
                return s;
            }
        }
        return -1;
    }

    /**
     * The object to read for the segment at {@code start}, as {@code follow} (this catalog's history, or a reader's own)
     * says; null when none is usable.
     *
     * @param notBelow the epoch the reader is already in (an epoch-named object of an older one is never read after it);
     *                 {@link ArchiveNames#LEGACY} at the start of a run
     */
    public Piece choose(EpochHistory follow, long start, long segmentSize, int notBelow) {
        List<Epoch> epochs = follow.epochs();
        for (int i = epochs.size() - 1; i >= 0; i--) {
            Epoch e = epochs.get(i);
            if (e.number() < notBelow) {
                break;
            }
            long end = follow.endOf(e.number());
            if (e.startLsn() >= start + segmentSize || end <= start) {
                continue; // this epoch wrote nothing into the segment
            }
            Piece p = piece(sealed, e.number(), start, segmentSize, end, false);
            if (p == null) {
                p = piece(partials, e.number(), start, segmentSize, end, true);
            }
            if (p != null) {
                return p;
            }
        }
        if (notBelow != ArchiveNames.LEGACY || hasEpochNamed(start)) {
            return null;
        }
        Piece p = piece(sealed, ArchiveNames.LEGACY, start, segmentSize, Long.MAX_VALUE, false);
        return p != null ? p : piece(partials, ArchiveNames.LEGACY, start, segmentSize, Long.MAX_VALUE, true);
    }

    private boolean hasEpochNamed(long start) {
        for (Map<Integer, ArchiveTarget.StoredObject> m : List.of(sealed.getOrDefault(start, Map.of()),
                partials.getOrDefault(start, Map.of()))) {
            for (int epoch : m.keySet()) {
                if (epoch != ArchiveNames.LEGACY) {
                    return true;
                }
            }
        }
        return false;
    }

    private static Piece piece(TreeMap<Long, Map<Integer, ArchiveTarget.StoredObject>> objects, int epoch, long start,
                               long segmentSize, long epochEnd, boolean partial) {
        Map<Integer, ArchiveTarget.StoredObject> byEpoch = objects.get(start);
        ArchiveTarget.StoredObject o = byEpoch == null ? null : byEpoch.get(epoch);
        if (o == null) {
            return null;
        }
        long objectEnd = start + (partial ? o.size() : segmentSize);
        return new Piece(o.name(), start, epoch, partial, o.size(), Math.min(objectEnd, epochEnd));
    }

    /** Every object this catalog will not read under {@code follow}: epochs outside it (for one warning). */
    public List<String> foreign(EpochHistory follow) {
        List<String> out = new ArrayList<>();
        for (var objects : List.of(sealed, partials)) {
            objects.values().forEach(m -> m.forEach((epoch, o) -> {
                if (epoch != ArchiveNames.LEGACY && follow.find(epoch) == null) {
                    out.add(o.name());
                }
            }));
        }
        return out;
    }
}
