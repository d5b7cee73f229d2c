package io.walden.core.internal.journal;

import io.walden.core.Lsn;
import io.walden.core.WalCorruptedException;
import io.walden.core.internal.segment.SegmentFiles;

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
    private LogKeys() {
    }

    /** The key of the log in {@code dir}: from its file, or a new one, written durably, for a log made before journals. */
    public static long readOrAssign(Path dir, Collection<Long> taken) throws IOException {
        Path file = dir.resolve(StoreJournal.KEY_FILE);
        if (Files.exists(file)) {
            byte[] bytes = Files.readAllBytes(file);
            if (bytes.length != Long.BYTES) {
                // A new key would make the journal's entries for this log unreachable: what only the journal holds
                // of it would be lost without a word. Refused instead, naming the file.
                throw new WalCorruptedException("the store key " + file + " is " + bytes.length + " bytes long, not 8: "
                        + "the store journal's entries for this log cannot be matched to it. Restore the file (the log's "
                        + "key is in its journal entries) or the log from a backup", Lsn.INVALID, file);
            }
            return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong();
        }
        return assign(dir, taken); // a log made before stores had journals: no entry can name it yet
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
