package io.walden.core.internal.journal;

import io.walden.core.internal.segment.SegmentFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A store log's key in the journal: the file {@link StoreJournal#KEY_FILE} in its directory, 8 bytes little-endian
 * (docs/format.md, "The store journal"). Random and unique in the store, never 0, so that a log deleted and made again
 * under its name never receives the old one's entries.
 *
 * <p>Thread-safety: none needed; the store calls it under its own lock or before it is shared.
 */
public final class LogKeys {
    private static final Logger LOG = LoggerFactory.getLogger(LogKeys.class);

    private LogKeys() {
    }

    /** The key of the log in {@code dir}: from its file, or a new one, written durably, for a log made before journals. */
    public static long readOrAssign(Path dir, Collection<Long> taken) throws IOException {
        Path file = dir.resolve(StoreJournal.KEY_FILE);
        if (Files.exists(file)) {
            byte[] bytes = Files.readAllBytes(file);
            if (bytes.length == Long.BYTES) {
                return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong();
            }
            LOG.warn("The store key in {} is {} bytes long, not 8: giving the log a new one", file, bytes.length);
        }
        return assign(dir, taken);
    }

    /** A key none of {@code taken} is (never 0), written durably into {@code dir}. */
    public static long assign(Path dir, Collection<Long> taken) throws IOException {
        long key;
        do {
            key = ThreadLocalRandom.current().nextLong();
        } while (key == 0 || taken.contains(key));
        byte[] bytes = ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN).putLong(key).array();
        SegmentFiles.replaceDurably(dir, StoreJournal.KEY_FILE, bytes);
        return key;
    }
}
