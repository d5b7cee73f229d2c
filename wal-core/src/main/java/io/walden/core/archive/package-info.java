/**
 * Continuous archiving of sealed segments to object storage, and restore from it (PostgreSQL's
 * {@code archive_command} / {@code restore_command}). The guarantees and the object layout are specified in
 * docs/format.md ("Archive") and the operations in docs/operations.md ("Backup and restore").
 *
 * <p>A log configured with {@link io.walden.core.WalConfig.Builder#archive} archives itself, and tells how that goes
 * ({@link io.walden.core.archive.ArchiverStatus}); {@link io.walden.core.archive.Restore} builds a log from an
 * archive; {@link io.walden.core.archive.ArchiveTarget} is where the objects go ({@code file://} or {@code s3://}).
 */
package io.walden.core.archive;
