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

    @Override
    void close();
}
