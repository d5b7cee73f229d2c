/**
 * The archive's implementation: the {@link io.walden.core.internal.archive.Archiver} (its thread, and the status it
 * reports), the uploader, its progress, checksums, the cap on bytes waiting, the markers, and the restore behind
 * {@link io.walden.core.archive.Restore}. Internal to Walden; object names and the
 * status directory are specified in docs/format.md ("Archive").
 */
package io.walden.core.internal.archive;
