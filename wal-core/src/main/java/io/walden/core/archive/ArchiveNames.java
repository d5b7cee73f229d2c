package io.walden.core.archive;

import io.walden.core.segment.SegmentFiles;

/** The names of archived objects (docs/format.md, "Archive"). */
final class ArchiveNames {
    /** A sealed segment's object: the segment file's own name. */
    static final String SEGMENT_SUFFIX = SegmentFiles.SUFFIX;
    /** The flushed head of a segment that was not sealed yet (archive timeout): {@code <segment>.wal.partial}. */
    static final String PARTIAL_SUFFIX = SegmentFiles.SUFFIX + ".partial";

    private ArchiveNames() {
    }

    static String segment(long startLsn) {
        return SegmentFiles.name(startLsn);
    }

    static String partial(long startLsn) {
        return SegmentFiles.name(startLsn) + ".partial";
    }

    /** The start LSN an object name stands for, or -1 when it is not a segment or partial object. */
    static long startOf(String name) {
        String base;
        if (name.endsWith(PARTIAL_SUFFIX)) {
            base = name.substring(0, name.length() - ".partial".length());
        } else if (name.endsWith(SEGMENT_SUFFIX)) {
            base = name;
        } else {
            return -1;
        }
        return SegmentFiles.parseName(base);
    }
}
