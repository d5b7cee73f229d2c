package io.walden.core;

import io.walden.core.internal.segment.SegmentFiles;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Byte-for-byte comparison of two copies of a log (a primary's and a replica's), over the segments that hold its
 * records. A segment prepared ahead of need is left out: whether it exists yet depends only on when each log's
 * preparer thread got to it, not on what the log holds.
 */
public final class WrittenSegments {
    private WrittenSegments() {
    }

    /**
     * Asserts that every segment of {@code reference} starting below {@code end} exists in {@code copy} with the
     * same bytes, and that {@code copy} holds no other segment below {@code end}.
     *
     * @return how many segments were compared
     */
    public static int assertIdentical(Path reference, Path copy, long end) {
        try {
            var written = SegmentFiles.list(reference).stream().filter(start -> start < end).toList();
            assertThat(SegmentFiles.list(copy).stream().filter(start -> start < end).toList())
                    .as("segments of %s below %s", copy, Lsn.format(end)).isEqualTo(written);
            for (long start : written) {
                Path segment = SegmentFiles.path(reference, start);
                assertThat(Files.mismatch(segment, SegmentFiles.path(copy, start)))
                        .as("segment %s in %s", segment.getFileName(), copy).isEqualTo(-1L);
            }
            return written.size();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
