package io.walden.core.internal;

import io.walden.core.internal.segment.SegmentFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Removes the directory trees of a store's logs: a log's, once renamed out of the store for its deletion, and what a
 * crash left of a creation or a deletion ({@code WalStore}'s class comment says why the renames make that safe).
 *
 * <p>Thread-safety: stateless; the store calls it under its own lock.
 */
public final class StoreDirectories {
    private static final Logger LOG = LoggerFactory.getLogger(StoreDirectories.class);

    private StoreDirectories() {
    }

    /** Removes {@code dir} and everything under it, deepest first; nothing when it does not exist. */
    public static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** {@link #deleteTree}, logging a failure: what is left is removed at the store's next open. */
    public static void deleteQuietly(Path dir) {
        try {
            deleteTree(dir);
        } catch (IOException e) {
            LOG.warn("Could not remove {} (removed at the store's next open): {}", dir, e.toString());
        }
    }

    /**
     * Takes a log's directory {@code dir} out of the store's {@code logs} directory by renaming it to {@code doomed}
     * (forced: a crash no longer finds it there), then removes it; quietly (a failed creation's cleanup): what is
     * left opens with the store next time, or is removed then.
     */
    public static void discard(Path logs, Path dir, Path doomed) {
        try {
            deleteTree(doomed);
            Files.move(dir, doomed, StandardCopyOption.ATOMIC_MOVE);
            SegmentFiles.forceDirectory(logs);
            deleteTree(doomed);
        } catch (IOException e) {
            LOG.warn("Could not take {} out of the store (it opens with the store next time): {}", dir, e.toString());
        }
    }

    /** Closes {@code channel} (null: none), quietly: an open that failed already reports its own failure. */
    public static void closeQuietly(FileChannel channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // the open failed already; that failure is the one reported
            }
        }
    }
}
