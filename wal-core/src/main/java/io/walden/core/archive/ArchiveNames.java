package io.walden.core.archive;

import io.walden.core.internal.segment.SegmentFiles;

import java.util.Locale;

/**
 * The names of archived objects (docs/format.md, "Archive"), PostgreSQL's scheme: a segment's object is named by the
 * epoch that wrote its last byte and by its start, {@code EEEEEEEESSSSSSSSSSSSSSSS.wal} (8 and 16 hex digits), the
 * flushed head of an unsealed one {@code ….wal.partial}, and each epoch's history {@code EEEEEEEE.history}. Two
 * histories that part inside a segment so name their copies of it apart: an old primary's late upload never replaces
 * the new primary's, and a restore picks by the history (see {@link ArchiveCatalog}). Archives written before epochs were
 * named hold {@code SSSSSSSSSSSSSSSS.wal} objects: read as epoch {@link #LEGACY}.
 */
public final class ArchiveNames {
    /** The epoch of an object named before archives named epochs. */
    public static final int LEGACY = 0;
    static final String PARTIAL = ".partial";
    static final String HISTORY = ".history";

    /** What an object's name says. @param epoch {@link #LEGACY} for an old name */
    public record Parsed(int epoch, long start, boolean partial) {
    }

    private ArchiveNames() {
    }

    public static String segment(int epoch, long startLsn) {
        return String.format(Locale.ROOT, "%08X", epoch) + SegmentFiles.name(startLsn);
    }

    public static String partial(int epoch, long startLsn) {
        return segment(epoch, startLsn) + PARTIAL;
    }

    public static String history(int epoch) {
        return String.format(Locale.ROOT, "%08X", epoch) + HISTORY;
    }

    /** What a segment or partial object's name stands for, or null when it is not one. */
    public static Parsed parse(String name) {
        boolean partial = name.endsWith(PARTIAL);
        String base = partial ? name.substring(0, name.length() - PARTIAL.length()) : name;
        long start = SegmentFiles.parseName(base);
        if (start >= 0) {
            return new Parsed(LEGACY, start, partial);
        }
        if (base.length() != 8 + SegmentFiles.name(0).length()) {
            return null;
        }
        int epoch = epochOf(base.substring(0, 8));
        start = SegmentFiles.parseName(base.substring(8));
        return epoch <= 0 || start < 0 ? null : new Parsed(epoch, start, partial);
    }

    /** The epoch a history object's name stands for, or -1 when it is not one. */
    public static int historyEpoch(String name) {
        if (name.length() != 8 + HISTORY.length() || !name.endsWith(HISTORY)) {
            return -1;
        }
        int epoch = epochOf(name.substring(0, 8));
        return epoch > 0 ? epoch : -1;
    }

    private static int epochOf(String hex) {
        if (!hex.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            return -1;
        }
        try {
            long n = Long.parseLong(hex, 16);
            return n > Integer.MAX_VALUE ? -1 : (int) n;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
