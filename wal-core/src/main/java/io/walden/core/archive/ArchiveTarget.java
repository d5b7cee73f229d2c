package io.walden.core.archive;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Where archived segments are kept: a directory ({@link FileArchiveTarget}) or an S3-compatible bucket
 * ({@link S3ArchiveTarget}). Objects are named as docs/format.md ("Archive") says; a target stores bytes, it does not
 * interpret them.
 *
 * <p>Thread-safety: implementations may be called from several threads (the archiver's, a restore's).
 */
public interface ArchiveTarget extends AutoCloseable {

    /** One stored object. */
    record StoredObject(String name, long size) {
    }

    /** The target as a user wrote it ({@code s3://bucket/prefix}, {@code file:///dir}). */
    String uri();

    /**
     * Stores the first {@code length} bytes of {@code file} as {@code name}, replacing any object of that name, and
     * returns only once the stored object is known to hold exactly those bytes (its checksum, as the store reports
     * it or as read back, equals the local one). A failure at any point leaves the old object or a partial one, never
     * one that a later {@code put} of the same name would not replace.
     *
     * @throws IOException when the store refuses, fails, or the stored object does not verify
     */
    void put(String name, Path file, long length) throws IOException;

    /** Copies object {@code name} into {@code dest} (replaced). False when there is no such object. */
    boolean get(String name, Path dest) throws IOException;

    /** Every stored object, in no particular order. */
    List<StoredObject> list() throws IOException;

    /** Removes {@code name}; nothing happens when it is absent. */
    void delete(String name) throws IOException;

    /**
     * The same store, its objects named under {@code prefix} of this target's ({@code logs/orders/}: a directory
     * target's {@code <dir>/logs/orders/}, an S3 target's {@code <prefix>logs/orders/}): another log's archive beside this
     * one's, which {@link #list} of this target never shows. It shares this target's client: closing it changes nothing,
     * and it is usable until this target is closed. Nothing is created until the first {@link #put}.
     *
     * @param prefix one or more path segments, each followed by {@code /}
     * @throws IllegalArgumentException when {@code prefix} is not that
     */
    ArchiveTarget under(String prefix);

    /**
     * The names of the prefixes directly under this target ({@code orders} for objects named under {@code orders/}; a
     * directory target's subdirectories), sorted: the targets {@link #under} reaches.
     */
    List<String> prefixes() throws IOException;

    /** Checks a prefix given to {@link #under}: segments of a name, each followed by a slash, none {@code .} or {@code ..}. */
    static String checkPrefix(String prefix) {
        if (prefix == null || !prefix.endsWith("/") || prefix.startsWith("/") || prefix.contains("//")
                || ("/" + prefix).contains("/./") || ("/" + prefix).contains("/../")) {
            throw new IllegalArgumentException("an archive prefix is one or more names each followed by '/', not '"
                    + prefix + "'");
        }
        return prefix;
    }

    @Override
    void close();
}
