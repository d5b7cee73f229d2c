package io.walden.core;

import java.nio.ByteBuffer;

/**
 * A run of flushed log bytes as a primary sends it to a replica (docs/replication-protocol.md, Data frames):
 * whole records from {@code startLsn}, within one segment, copied out of the log.
 *
 * @param startLsn where the bytes start (a record boundary)
 * @param bytes    the records, read-only, position 0
 * @param nextLsn  where the next chunk starts: {@link #endLsn()}, or past the next segment's header when these bytes
 *                 end their segment (a sender continues from here; it need not know the segment layout)
 */
public record ReplicationChunk(long startLsn, ByteBuffer bytes, long nextLsn) {
    /** Where the bytes end: the position the replica's log reaches with them (it may be a segment's end). */
    public long endLsn() {
        return startLsn + bytes.remaining();
    }
}
