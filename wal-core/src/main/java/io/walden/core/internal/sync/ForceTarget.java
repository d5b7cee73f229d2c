package io.walden.core.internal.sync;

import java.io.IOException;

/**
 * What a {@link SyncStrategy} forces: one segment file, seen only as far as forcing it needs (the segment itself, its
 * mapping and its records stay internal to the log).
 */
public interface ForceTarget {
    /** The LSN of the file's first byte: a strategy's offsets count from here. */
    long startLsn();

    /** {@code FileChannel.force}: the file's data reaches stable storage, and its metadata too when {@code metadata}. */
    void force(boolean metadata) throws IOException;
}
