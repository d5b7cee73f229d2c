package io.walden.core;

import java.nio.file.Path;

/** One live segment file of a {@link Wal}: the LSNs it covers and where it is. */
public record SegmentInfo(long startLsn, long endLsn, Path path) {
    public long size() {
        return endLsn - startLsn;
    }
}
